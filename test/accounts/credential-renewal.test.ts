import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { connectAccount } from '../../src/accounts/service';
import { createCredentialKeeper, credentialWorkflowId, reconcileCredentialWorkflows } from '../../src/accounts/credential-workflow-client';
import { createLogger } from '../../src/logger';
import { openCredentials, sealCredentials } from '../../src/accounts/credentials';
import { loseEndedCredential, renewAccountCredential } from '../../src/accounts/credential-renewal';
import { CredentialRenewalPending, keepingCredentialsAlive } from '../../src/accounts/credential-keeping-adapters';
import { loadPlatformContext } from '../../src/accounts/platform-context';
import { RenewalSetupFailure } from '../../src/platforms/renewal/token-endpoint';
import type { AccountRow } from '../../src/db/tables/accounts';
import { createHttpClient } from '../../src/net/http';
import { createGraphRenewer } from '../../src/platforms/graph/refresh';
import type { CredentialRenewers } from '../../src/platforms/renewal/types';
import { createActivities } from '../../activities';
import { testConfig } from '../helpers/api';
import { createXRenewer } from '../../src/platforms/x/refresh';
import { insertAccount, testSealedBox } from '../posts/fixtures';
import { createTestDatabase, type TestDatabase } from '../helpers/db';
import { endWaitingWorkflow, startPostsHarness, type PostsHarness } from '../posts/harness';
import { silenceSdkLogs } from '../helpers/temporal';
import { threadWorkflowId } from '../../src/threads/workflow-client';

/**
 * decisions.md "Keeping credentials alive", on x (two-hour tokens, single-use refresh tokens): the credential workflow
 * renews at 80% of the lifetime, a publish that meets an ended token renews it and retries once, concurrent publishes
 * cause one renewal, a spent refresh token is never sent, a refused renewal loses the connection and cancels the
 * scheduled posts, a transient one is retried until the token is back, and a week of renewals keeps a history short.
 * The X stand-in judges token lifetimes by the workflow clock (time skipping moves it).
 */

const HOUR = 60 * 60_000;
const serviceUnavailable = { kind: 'reply' as const, response: { status: 503, json: { error: 'temporarily_unavailable' } } };

describe('Credentials that stay alive', function () {
  this.timeout(300_000);
  let h: PostsHarness;
  const http = createHttpClient({ allowInsecure: true, timeoutMs: 5_000 });
  let renewers: CredentialRenewers;
  // A database of its own: the reconciler at start reads every account, and in the shared one it would give other
  // files' x accounts (their tokens named as this stand-in names its own) workflows on this harness's worker.
  let database: TestDatabase;

  before(async function () {
    // Failing renewals are the point of some tests: the SDK's warning for each retried activity is noise here.
    silenceSdkLogs('ERROR');
    let xOrigin = '';
    renewers = { x: createXRenewer({ http, origin: 'http://placeholder.invalid', app: { clientId: 'conformance-client', clientSecret: 'conformance-secret' } }) };
    database = await createTestDatabase();
    h = await startPostsHarness({ plan: 'pro', posts: { renewers, renewalPatienceMs: [20, 20] }, database });
    xOrigin = h.standIns.x.origin;
    // The stand-ins start inside the harness: point the renewer at the X stand-in now that its origin is known.
    Object.assign(renewers, {
      x: createXRenewer({ http, origin: xOrigin, app: { clientId: 'conformance-client', clientSecret: 'conformance-secret' } }),
      threads: createGraphRenewer({ http, platform: 'threads', apiUrl: h.standIns.threads.origin }),
    });
    h.standIns.x.standIn.clock = () => h.env.currentTimeMs();
    h.standIns.threads.standIn.clock = () => h.env.currentTimeMs();
  });
  after(async () => {
    await h?.stop();
    await http.close();
    await database?.close();
  });
  afterEach(() => h.standIns.x.standIn.clearFaults());

  const keeper = () => createCredentialKeeper(h.env.client, h.taskQueue);
  const account = (id: string) => h.db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const credentialsOf = async (id: string) => {
    const row = await account(id);
    return openCredentials(testSealedBox, row.user_id, row.credentials_sealed!);
  };
  const post = (id: string) => h.db.selectFrom('posts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  /** An x account connected with OAuth 2.0 tokens the stand-in issued at `issuedAt` (workflow clock), living `lifetimeS`. */
  async function renewableXAccount(
    options: { lifetimeS?: number } = {},
  ): Promise<{ row: AccountRow; refreshToken: string; accessToken: string; user: ReturnType<PostsHarness['standIns']['x']['addUser']> }> {
    const now = await h.env.currentTimeMs();
    const user = h.standIns.x.addUser({ username: `user${randomUUID().slice(0, 8)}` });
    const lifetimeS = options.lifetimeS ?? 7200;
    const pair = h.standIns.x.issueTokens(user, now, lifetimeS);
    const row = await insertAccount(h.db, h.api.userId, {
      platform: 'x',
      platform_account_id: user.id,
      username: user.username,
      credentials: { access_token: pair.accessToken, refresh_token: pair.refreshToken },
      settings: { user_id: user.id, username: user.username },
      credential_issued_at: new Date(now),
      credential_expires_at: new Date(now + lifetimeS * 1000),
    });
    return { row, user, ...pair };
  }

  /** The renewal calls the X stand-in saw for refresh tokens issued to this test's accounts since `from`. */
  const renewalsSince = (from: number) => h.standIns.x.oauth.renewals.slice(from);

  /** Real-time wait for a condition the worker reaches after time skipped (activities run in real time). */
  async function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) assert.fail(`timed out waiting for: ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** The post waits for its account's credential as `scheduled`, no retry spent and no message. */
  async function expectWaitingForCredential(postId: string, why: string): Promise<void> {
    const waiting = await post(postId);
    assert.deepEqual(
      { status: waiting.status, retry_count: waiting.retry_count, error_message: waiting.error_message },
      { status: 'scheduled', retry_count: 0, error_message: null },
      why,
    );
  }

  async function schedule(accountId: string, text: string, at: number): Promise<string> {
    await h.syncClock();
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: accountId, text, schedule_at: new Date(at).toISOString() } });
    assert.equal(res.status, 201, res.text);
    return res.body.data.id;
  }

  it('renews at 80% of the lifetime, stores the new pair, and continues as new', async () => {
    const from = h.standIns.x.oauth.renewals.length;
    const { row, refreshToken } = await renewableXAccount();
    const issuedAt = row.credential_issued_at!.getTime();
    await keeper().credentialStored(row.id);
    const firstRun = (await h.env.client.workflow.getHandle(credentialWorkflowId(row.id)).describe()).runId;

    await h.env.sleep(0.8 * 2 * HOUR - 2 * 60_000);
    assert.deepEqual(renewalsSince(from), [], 'nothing renewed before 80% of the lifetime');

    await h.env.sleep(3 * 60_000);
    await eventually('the renewal is stored', async () => (await credentialsOf(row.id)).refresh_token !== refreshToken);
    assert.deepEqual(renewalsSince(from), [{ refreshToken, outcome: 'renewed' }]);
    const renewed = await account(row.id);
    const renewedAt = renewed.credential_issued_at!.getTime() - issuedAt;
    assert.ok(renewedAt >= 0.8 * 2 * HOUR && renewedAt < 0.8 * 2 * HOUR + 60_000, `renewed ${renewedAt / 60_000} minutes after issue`);
    assert.equal(renewed.credential_expires_at!.getTime() - renewed.credential_issued_at!.getTime(), 2 * HOUR, 'the new token lives expires_in');
    const stored = await credentialsOf(row.id);
    assert.equal(h.standIns.x.oauth.refresh.get(stored.refresh_token!)?.spent, false, 'the stored refresh token is the new, unspent one');
    assert.equal(h.standIns.x.oauth.access.has(stored.access_token!), true);
    const description = await h.env.client.workflow.getHandle(credentialWorkflowId(row.id)).describe();
    assert.equal(description.status.name, 'RUNNING');
    assert.notEqual(description.runId, firstRun, 'a fresh run after the renewal');
    await h.env.client.workflow.getHandle(credentialWorkflowId(row.id)).terminate('test done');
  });

  it('a token handed over at connect (age unknown) is renewed at once on x, and after 24 hours on threads', async () => {
    const now = await h.env.currentTimeMs();
    const user = h.standIns.x.addUser({ username: `user${randomUUID().slice(0, 8)}` });
    const pair = h.standIns.x.issueTokens(user, now - HOUR);
    const x = await insertAccount(h.db, h.api.userId, {
      platform: 'x',
      platform_account_id: user.id,
      username: user.username,
      credentials: { access_token: pair.accessToken, refresh_token: pair.refreshToken },
      settings: { user_id: user.id, username: user.username },
      credential_issued_at: null,
      credential_expires_at: new Date(now + 2 * HOUR),
    });
    await keeper().credentialStored(x.id);
    await eventually('the x credential is renewed', async () => (await credentialsOf(x.id)).refresh_token !== pair.refreshToken);
    const renewedX = await account(x.id);
    assert.ok(renewedX.credential_issued_at!.getTime() - now < 60_000, 'renewed at once');
    assert.equal(renewedX.credential_expires_at!.getTime() - renewedX.credential_issued_at!.getTime(), 2 * HOUR, 'its real end learnt');
    await h.env.client.workflow.getHandle(credentialWorkflowId(x.id)).terminate('test done');

    // A Threads token ten days old when connected: Herald does not know its age, and renews it once it surely may.
    const threadsToken = h.standIns.threads.tokens.issue(now, 60 * 24 * 3600, now - 10 * 24 * HOUR);
    const threadsUser = h.standIns.threads.user;
    const threads = await insertAccount(h.db, h.api.userId, {
      platform: 'threads',
      platform_account_id: `${threadsUser.id}-${randomUUID().slice(0, 4)}`,
      username: threadsUser.username,
      credentials: { access_token: threadsToken },
      settings: { threadsUserId: threadsUser.id },
      credential_issued_at: null,
      credential_expires_at: new Date(now + 60 * 24 * HOUR),
    });
    await keeper().credentialStored(threads.id);
    await h.env.sleep(23 * HOUR);
    assert.equal((await credentialsOf(threads.id)).access_token, threadsToken, 'not renewed within the first day');
    await h.env.sleep(2 * HOUR);
    await eventually('the threads token is renewed', async () => (await credentialsOf(threads.id)).access_token !== threadsToken);
    const renewed = await account(threads.id);
    const after = renewed.credential_issued_at!.getTime() - now;
    assert.ok(after >= 24 * HOUR && after < 24 * HOUR + 60_000, `renewed ${after / HOUR} hours after the connect`);
    assert.equal(renewed.credential_expires_at!.getTime() - renewed.credential_issued_at!.getTime(), 60 * 24 * HOUR);
    assert.equal((await credentialsOf(threads.id)).access_token, threadsUser.token, 'the token Threads handed out is stored');
    assert.deepEqual(h.standIns.threads.tokens.renewals.at(-1), { token: threadsToken, outcome: 'renewed' });
    await h.env.client.workflow.getHandle(credentialWorkflowId(threads.id)).terminate('test done');
  });

  it('the reconciler at start gives every active account with an expiring credential its workflow; one nothing can renew waits for its end', async () => {
    const from = h.standIns.x.oauth.renewals.length;
    const { row, refreshToken } = await renewableXAccount();
    await h.db.updateTable('accounts').set({ credential_issued_at: null }).where('id', '=', row.id).execute();
    const { row: noRefresh } = await xAccountWithoutRefreshToken();
    try {
      const result = await reconcileCredentialWorkflows(h.db, keeper(), createLogger('silent'));
      assert.ok(result.started >= 2 && result.checked === result.started, JSON.stringify(result));
      await eventually('the reconciled account is renewed', async () => (await credentialsOf(row.id)).refresh_token !== refreshToken);
      assert.deepEqual(
        renewalsSince(from).filter((r) => r.refreshToken === refreshToken),
        [{ refreshToken, outcome: 'renewed' }],
      );
      assert.equal((await h.env.client.workflow.getHandle(credentialWorkflowId(noRefresh.id)).describe()).status.name, 'RUNNING');
      assert.equal((await account(noRefresh.id)).active, true, 'its token has not ended');
    } finally {
      // The reconciler started one for every account of this shared database: the later tests renew only their own.
      for (const { id } of await h.db.selectFrom('accounts').select('id').execute()) {
        await h.env.client.workflow.getHandle(credentialWorkflowId(id)).terminate('test done').catch(() => undefined);
      }
    }
  });

  /** An x account connected with an OAuth 2.0 access token and no refresh token: nothing can renew it. */
  async function xAccountWithoutRefreshToken(): Promise<{ row: AccountRow; user: ReturnType<PostsHarness['standIns']['x']['addUser']> }> {
    const now = await h.env.currentTimeMs();
    const user = h.standIns.x.addUser({ username: `user${randomUUID().slice(0, 8)}` });
    const row = await insertAccount(h.db, h.api.userId, {
      platform: 'x',
      platform_account_id: user.id,
      username: user.username,
      credentials: { access_token: h.standIns.x.issueTokens(user, now).accessToken },
      settings: { user_id: user.id, username: user.username },
      credential_expires_at: new Date(now + 2 * HOUR),
    });
    return { row, user };
  }

  it('x without a refresh_token works until its token ends, then becomes connection_lost and its scheduled posts are cancelled', async () => {
    const { row } = await xAccountWithoutRefreshToken();
    const start = await h.env.currentTimeMs();
    const later = await schedule(row.id, 'never sent: the token ended', start + 5 * HOUR);
    await keeper().credentialStored(row.id);

    await h.env.sleep(2 * HOUR - 5 * 60_000);
    const before = await account(row.id);
    assert.deepEqual({ active: before.active, inactive_reason: before.inactive_reason }, { active: true, inactive_reason: null }, 'works until its token ends');
    assert.equal((await post(later)).status, 'scheduled');

    const handle = h.env.client.workflow.getHandle(credentialWorkflowId(row.id));
    assert.deepEqual(await handle.result(), { outcome: 'lost', renewals: 0 });
    const lost = await account(row.id);
    assert.deepEqual({ active: lost.active, inactive_reason: lost.inactive_reason }, { active: false, inactive_reason: 'connection_lost' });
    const lostAfter = (await handle.describe()).closeTime!.getTime() - lost.credential_expires_at!.getTime();
    assert.ok(lostAfter >= 0 && lostAfter < 60_000, `lost ${lostAfter / 1000} s after the token ended`);
    const cancelled = await post(later);
    assert.deepEqual({ status: cancelled.status, error_message: cancelled.error_message }, { status: 'deleted', error_message: 'connection_lost' });
    const events = await h.db.selectFrom('events').select('data').where('user_id', '=', row.user_id).where('type', '=', 'account.connection_lost').execute();
    assert.equal(events.filter((e) => (e.data as { id?: string }).id === row.id).length, 1, 'its account.connection_lost event is written');
  });

  it('a reconnect before the token ends replaces the credential: the end of the old one never loses the new one', async () => {
    const { row, user } = await xAccountWithoutRefreshToken();
    const oldEnd = row.credential_expires_at!.getTime();
    await keeper().credentialStored(row.id);
    await h.env.sleep(HOUR);

    // Reconnected (again without a refresh token), as connect stores it: a new token, its end counted from now, and the workflow woken.
    const reconnectedAt = await h.env.currentTimeMs();
    const fresh = h.standIns.x.issueTokens(user, reconnectedAt);
    await h.db
      .updateTable('accounts')
      .set({ credentials_sealed: sealCredentials(testSealedBox, row.user_id, { access_token: fresh.accessToken }), credential_expires_at: new Date(reconnectedAt + 2 * HOUR) })
      .where('id', '=', row.id)
      .execute();
    await keeper().credentialStored(row.id);

    // The write is conditional on the credential having ended: a plan made for the old credential cannot lose the new one.
    const deps = { db: h.db, sealedBox: testSealedBox, renewers: {}, logger: createLogger('silent') };
    assert.deepEqual(await loseEndedCredential(deps, row.id, oldEnd + 60_000), { kind: 'current', expiresAt: null });

    await h.env.sleep(HOUR + 10 * 60_000);
    assert.equal((await account(row.id)).active, true, 'past the old token\'s end, the new credential is kept');
    assert.equal((await h.env.client.workflow.getHandle(credentialWorkflowId(row.id)).describe()).status.name, 'RUNNING');

    const handle = h.env.client.workflow.getHandle(credentialWorkflowId(row.id));
    assert.deepEqual(await handle.result(), { outcome: 'lost', renewals: 0 });
    assert.equal((await account(row.id)).inactive_reason, 'connection_lost', 'the new token is lost at its own end');
    const lostAfter = (await handle.describe()).closeTime!.getTime() - (reconnectedAt + 2 * HOUR);
    assert.ok(lostAfter >= 0 && lostAfter < 60_000, `lost ${lostAfter / 1000} s after the new token ended`);
  });

  it('renews on demand when X answers that the token ended, and retries the publish once with the new token', async () => {
    const from = h.standIns.x.oauth.renewals.length;
    const { row, accessToken, refreshToken } = await renewableXAccount();
    h.standIns.x.expireAccessToken(accessToken);
    await h.syncClock();
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: row.id, text: 'after the token ended' } });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.data.status, 'published');
    assert.equal(res.body.data.retry_count, 0);
    assert.deepEqual(renewalsSince(from), [{ refreshToken, outcome: 'renewed' }]);
    const creates = h.standIns.x.standIn.calls('POST', '/2/tweets').filter((c) => c.json?.text === 'after the token ended');
    assert.deepEqual(
      creates.map((c) => c.headers.authorization === `Bearer ${accessToken}`),
      [true, false],
      'one refused create with the ended token, one accepted with the new one',
    );
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === 'after the token ended').length, 1);
    assert.equal((await account(row.id)).active, true);
  });

  it('two concurrent publishes after the token ended cause one renewal, and no spent refresh token is ever sent', async () => {
    const from = h.standIns.x.oauth.renewals.length;
    const { row, accessToken, refreshToken } = await renewableXAccount();
    h.standIns.x.expireAccessToken(accessToken);
    await h.syncClock();
    const [a, b] = await Promise.all(
      ['concurrent one', 'concurrent two'].map((text) => h.api.request('POST', '/api/v1/posts', { body: { account_id: row.id, text } })),
    );
    assert.equal(a!.status, 201, a!.text);
    assert.equal(b!.status, 201, b!.text);
    assert.deepEqual([a!.body.data.status, b!.body.data.status], ['published', 'published']);
    assert.deepEqual(renewalsSince(from), [{ refreshToken, outcome: 'renewed' }], 'one renewal, with the one unspent refresh token');

    // Ended again: the next renewal sends the refresh token the first one handed out, never the spent one.
    const stored = await credentialsOf(row.id);
    h.standIns.x.expireAccessToken(stored.access_token!);
    const c = await h.api.request('POST', '/api/v1/posts', { body: { account_id: row.id, text: 'concurrent three' } });
    assert.equal(c.status, 201, c.text);
    assert.deepEqual(renewalsSince(from), [
      { refreshToken, outcome: 'renewed' },
      { refreshToken: stored.refresh_token!, outcome: 'renewed' },
    ]);
    assert.equal(h.standIns.x.oauth.renewals.filter((r) => r.outcome === 'spent').length, 0, 'no spent refresh token was ever sent');
  });

  it('a refused renewal marks the account connection_lost and cancels its scheduled posts with that reason', async () => {
    const from = h.standIns.x.oauth.renewals.length;
    const { row, refreshToken } = await renewableXAccount();
    const start = await h.env.currentTimeMs();
    const later = await schedule(row.id, 'never sent: revoked', start + 3 * HOUR);
    const muchLater = await schedule(row.id, 'never sent either', start + 30 * HOUR);
    h.standIns.x.revokeRefreshToken(refreshToken);
    await keeper().credentialStored(row.id);

    const result = await h.env.client.workflow.getHandle(credentialWorkflowId(row.id)).result();
    assert.deepEqual(result, { outcome: 'lost', renewals: 0 });
    assert.deepEqual(renewalsSince(from), [{ refreshToken, outcome: 'revoked' }]);
    const lost = await account(row.id);
    assert.deepEqual({ active: lost.active, inactive_reason: lost.inactive_reason }, { active: false, inactive_reason: 'connection_lost' });
    for (const id of [later, muchLater]) {
      const cancelled = await post(id);
      assert.deepEqual({ status: cancelled.status, error_message: cancelled.error_message }, { status: 'deleted', error_message: 'connection_lost' });
    }
    const seen = await h.api.request('GET', `/api/v1/accounts/${row.id}`);
    assert.equal(seen.body.data.inactive_reason, 'connection_lost');
    assert.equal(h.standIns.x.tweets().filter((t) => t.text.startsWith('never sent')).length, 0);
  });

  it('a reconnect without a refresh_token after a refused renewal is told it will not be renewed and works until its token ends, the refused one never sent again', async () => {
    const from = h.standIns.x.oauth.renewals.length;
    const { row, refreshToken, user } = await renewableXAccount();
    h.standIns.x.revokeRefreshToken(refreshToken);
    await keeper().credentialStored(row.id);
    const handle = h.env.client.workflow.getHandle(credentialWorkflowId(row.id));
    assert.deepEqual(await handle.result(), { outcome: 'lost', renewals: 0 });

    // The user reconnects with a new access token and no refresh token, as POST /api/v1/accounts does.
    const reconnectedAt = await h.env.currentTimeMs();
    const fresh = h.standIns.x.issueTokens(user, reconnectedAt);
    const connectDeps = {
      db: h.db,
      adapters: h.standIns.adapters,
      sealedBox: testSealedBox,
      comingSoon: new Set<string>(),
      allowInsecureUrls: true,
      logger: createLogger('silent'),
      credentialApps: { x: { clientId: 'conformance-client', clientSecret: 'conformance-secret' }, linkedin: null },
      credentialKeeper: keeper(),
      now: () => new Date(reconnectedAt),
    };
    const reconnected = await connectAccount(connectDeps, row.user_id, { platform: 'x', access_token: fresh.accessToken });
    assert.equal(reconnected.account.id, row.id);
    assert.deepEqual({ active: reconnected.account.active, inactive_reason: reconnected.account.inactive_reason }, { active: true, inactive_reason: null });
    assert.deepEqual(reconnected.warnings.map((w) => w.code), ['credential_not_renewable'], 'told it will need reconnecting when its token ends');
    assert.deepEqual(await credentialsOf(row.id), { access_token: fresh.accessToken }, 'the refused refresh token is not kept');

    const due = await schedule(row.id, 'after the reconnect', reconnectedAt + HOUR);
    assert.deepEqual(await h.settle(due), { outcome: 'published', firstComment: null });
    assert.equal((await account(row.id)).active, true, 'works until the new token ends');
    assert.deepEqual(renewalsSince(from), [{ refreshToken, outcome: 'revoked' }], 'the refused refresh token was never sent again');

    assert.deepEqual(await handle.result(), { outcome: 'lost', renewals: 0 });
    const lostAfter = (await handle.describe()).closeTime!.getTime() - (reconnectedAt + 2 * HOUR);
    assert.ok(lostAfter >= 0 && lostAfter < 60_000, `lost ${lostAfter / 1000} s after the new token ended`);
  });

  it('a switched-off account whose token ended is renewed on demand: deleting its published post works', async () => {
    const from = h.standIns.x.oauth.renewals.length;
    const { row, accessToken, refreshToken } = await renewableXAccount();
    await h.syncClock();
    const published = await h.api.request('POST', '/api/v1/posts', { body: { account_id: row.id, text: 'published, then its account switched off' } });
    assert.equal(published.body.data?.status, 'published', published.text);
    const off = await h.api.request('PATCH', `/api/v1/accounts/${row.id}`, { body: { active: false } });
    assert.equal(off.body.data?.inactive_reason, 'deactivated', off.text);
    h.standIns.x.expireAccessToken(accessToken);

    const del = await h.api.request('DELETE', `/api/v1/posts/${published.body.data.id}`);
    assert.deepEqual(del.body, { data: { id: published.body.data.id, deleted: true } }, del.text);
    assert.equal(h.standIns.x.liveTweets().filter((t) => t.text === 'published, then its account switched off').length, 0);
    assert.deepEqual(renewalsSince(from), [{ refreshToken, outcome: 'renewed' }]);
    const after = await account(row.id);
    assert.deepEqual({ active: after.active, inactive_reason: after.inactive_reason }, { active: false, inactive_reason: 'deactivated' }, 'still switched off');
  });

  it('a renewal refused during a publish fails that post and cancels the account\'s scheduled posts with connection_lost', async () => {
    const { row, accessToken, refreshToken } = await renewableXAccount();
    const start = await h.env.currentTimeMs();
    const scheduled = await schedule(row.id, 'scheduled, never sent', start + 5 * HOUR);
    h.standIns.x.expireAccessToken(accessToken);
    h.standIns.x.revokeRefreshToken(refreshToken);
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: row.id, text: 'immediate, refused' } });
    assert.equal(res.status, 502, res.text);
    assert.equal(res.body.error.code, 'upstream_error');
    assert.equal(res.body.error.message, "X no longer accepts this account's credentials; reconnect the account.");
    const lost = await account(row.id);
    assert.deepEqual({ active: lost.active, inactive_reason: lost.inactive_reason }, { active: false, inactive_reason: 'connection_lost' });
    const cancelled = await post(scheduled);
    assert.deepEqual({ status: cancelled.status, error_message: cancelled.error_message }, { status: 'deleted', error_message: 'connection_lost' });
  });

  it('X answering 401 to every create while its token endpoint renews keeps the accounts: the post fails as a fault at X, nothing is cancelled', async () => {
    // An outage (or a refusal of creates) at X: every create is answered as an ended or revoked token would be,
    // while the token endpoint still takes each account's refresh token. Before, each publishing account was lost.
    const unauthorized = { kind: 'reply' as const, response: { status: 401, json: { title: 'Unauthorized', type: 'about:blank', status: 401, detail: 'Unauthorized' } } };
    const from = h.standIns.x.oauth.renewals.length;
    const accounts = [await renewableXAccount(), await renewableXAccount()];
    const start = await h.env.currentTimeMs();
    const scheduled = await Promise.all(accounts.map(({ row }) => schedule(row.id, `scheduled during the outage ${row.id}`, start + 5 * HOUR)));
    h.standIns.x.standIn.inject({ method: 'POST', path: '/2/tweets' }, unauthorized, 100);
    for (const { row } of accounts) {
      const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: row.id, text: `refused by an outage ${row.id}` } });
      assert.equal(res.status, 502, res.text);
      assert.equal(
        res.body.error.message,
        "X refused this account's access right after renewing it, which points to a fault at X rather than a lost connection, so nothing was sent; try again later, or reconnect the account if this goes on.",
      );
      const kept = await account(row.id);
      assert.deepEqual({ active: kept.active, inactive_reason: kept.inactive_reason }, { active: true, inactive_reason: null }, 'the account stays active');
    }
    // A thread's parts go through the same adapters: its account is kept too.
    const threadAccount = (await renewableXAccount()).row;
    const thread = await h.api.request('POST', '/api/v1/threads', { body: { account_id: threadAccount.id, posts: [{ text: 'thread one' }, { text: 'thread two' }] } });
    assert.equal(thread.status, 502, thread.text);
    const threadKept = await account(threadAccount.id);
    assert.deepEqual({ active: threadKept.active, inactive_reason: threadKept.inactive_reason }, { active: true, inactive_reason: null }, "the thread's account stays active");
    assert.ok(renewalsSince(from).length >= 2 && renewalsSince(from).every((r) => r.outcome === 'renewed'), 'each account renewed: its grant is alive');
    for (const id of scheduled) assert.equal((await post(id)).status, 'scheduled', 'no scheduled post is cancelled');
    h.standIns.x.standIn.clearFaults();
    const after = await h.api.request('POST', '/api/v1/posts', { body: { account_id: accounts[0]!.row.id, text: 'after the outage' } });
    assert.equal(after.status, 201, after.text);
    assert.equal(after.body.data.status, 'published');
  });

  it('a transient renewal failure is retried with backoff, and a post due meanwhile publishes once the token is back', async () => {
    const from = h.standIns.x.oauth.renewals.length;
    const { row, refreshToken } = await renewableXAccount();
    const start = await h.env.currentTimeMs();
    const due = await schedule(row.id, 'due while the token endpoint is down', start + 2 * HOUR + 2 * 60_000);
    h.standIns.x.standIn.inject({ method: 'POST', path: '/2/oauth2/token' }, serviceUnavailable, 10_000);
    await keeper().credentialStored(row.id);

    // The renewal at 96 minutes and its retries fail; the token ends at 120; the post falls due at 122 and is still
    // waiting past 143, when three spent retries (1, 5 and 15 minutes) would have failed it.
    await h.env.sleep(2 * HOUR + 45 * 60_000);
    await expectWaitingForCredential(due, 'the post waits for the credential without spending its retries');
    const tries = h.standIns.x.standIn.calls('POST', '/2/tweets').filter((c) => c.json?.text === 'due while the token endpoint is down').length;
    assert.ok(tries >= 2, `the post looked again while waiting (${tries} refused creates)`);
    assert.equal((await account(row.id)).active, true, 'a transient failure never loses the connection');
    const attempts = h.standIns.x.standIn.calls('POST', '/2/oauth2/token').filter((c) => c.form?.refresh_token === refreshToken).length;
    assert.ok(attempts >= 3, `renewal retried (${attempts} attempts)`);

    h.standIns.x.standIn.clearFaults();
    assert.deepEqual(await h.settle(due), { outcome: 'published', firstComment: null });
    const published = await post(due);
    assert.deepEqual({ status: published.status, retry_count: published.retry_count }, { status: 'published', retry_count: 0 });
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === 'due while the token endpoint is down').length, 1);
    assert.deepEqual(
      renewalsSince(from).filter((r) => r.outcome !== 'renewed'),
      [],
      'every renewal that reached the endpoint succeeded; a failed one spends nothing',
    );
    assert.equal(renewalsSince(from).length >= 1, true);
    await h.env.client.workflow.getHandle(credentialWorkflowId(row.id)).terminate('test done');
  });

  it('a publish whose time is up tries a failing renewal once and reports it pending at once: no wait for another try, no create', async () => {
    const { row, refreshToken } = await renewableXAccount();
    h.standIns.x.standIn.inject({ method: 'POST', path: '/2/oauth2/token' }, serviceUnavailable, 10);
    const pauses: number[] = [];
    // The token has ended by this clock, so the call renews before it creates.
    const after = () => new Date(row.credential_expires_at!.getTime() + 60_000);
    const deps = { db: h.db, sealedBox: testSealedBox, renewers, logger: createLogger('silent'), now: after, patienceMs: [20, 20], sleep: async (ms: number) => void pauses.push(ms) };
    const adapters = keepingCredentialsAlive(h.standIns.adapters, deps);
    const { ctx } = await loadPlatformContext(h.db, testSealedBox, row.id);
    const stopped = AbortSignal.abort();
    const text = 'its time was up before the renewal came back';
    await assert.rejects(adapters.x.publish(ctx, { postId: randomUUID(), text, media: [], signal: stopped }), (err: unknown) => err instanceof CredentialRenewalPending);
    const tries = h.standIns.x.standIn.calls('POST', '/2/oauth2/token').filter((c) => c.form?.refresh_token === refreshToken).length;
    assert.deepEqual({ tries, pauses }, { tries: 1, pauses: [] }, 'one renewal try, no pause for another (a live call pauses 20 and 20 ms and tries three times)');
    assert.equal(h.standIns.x.standIn.calls('POST', '/2/tweets').filter((c) => c.json?.text === text).length, 0, 'nothing was sent');

    // The same call with time left is patient, as before: three tries, two pauses.
    await assert.rejects(adapters.x.publish(ctx, { postId: randomUUID(), text, media: [], signal: new AbortController().signal }), (err: unknown) => err instanceof CredentialRenewalPending);
    const triesLive = h.standIns.x.standIn.calls('POST', '/2/oauth2/token').filter((c) => c.form?.refresh_token === refreshToken).length;
    assert.deepEqual({ tries: triesLive, pauses }, { tries: 4, pauses: [20, 20] });
  });

  /** The activities as the worker has them, with this test's renewers (credentials kept alive on demand), called by the test. */
  const activitiesKeepingCredentials = () =>
    createActivities({
      config: testConfig(),
      db: h.db,
      logger: createLogger('silent'),
      posts: { adapters: h.standIns.adapters, sealedBox: testSealedBox, now: h.now, renewers, renewalPatienceMs: [20, 20] },
    });

  it('an interrupted attempt whose look a failing renewal stopped waits with its mark kept: once renewed it looks, finds the post, never sends it twice', async () => {
    const { row, accessToken } = await renewableXAccount();
    await h.syncClock();
    // The workflow's clock (earlier tests skipped hours of it), as the worker's claims read it.
    const now = h.now().getTime();
    const text = 'landed, then the worker stopped, then the token ended';
    const post = await h.db
      .insertInto('posts')
      .values({ user_id: h.api.userId, account_id: row.id, platform: 'x', text, status: 'publishing', scheduled_at: h.now() })
      .returning('id')
      .executeTakeFirstOrThrow();
    const activities = activitiesKeepingCredentials();
    assert.equal((await activities.publishToPlatform({ postId: post.id, now })).ok, true);
    // Back to the state of a worker that stopped between X's answer and the write: the mark is open.
    await h.db.updateTable('posts').set({ status: 'publishing', platform_post_id: null }).where('id', '=', post.id).execute();
    h.standIns.x.expireAccessToken(accessToken);
    h.standIns.x.standIn.inject({ method: 'POST', path: '/2/oauth2/token' }, serviceUnavailable, 10);

    // The look first meets the ended token and the renewal fails: nothing is asked, the post waits for the credential.
    const stopped = await activities.publishToPlatform({ postId: post.id, now });
    assert.deepEqual(stopped.ok === false && 'awaitingCredential' in stopped ? [stopped.kind, stopped.awaitingCredential] : stopped, ['retryable', true]);
    assert.deepEqual(await activities.awaitCredential({ postId: post.id, retryAt: now + 1, now }), { waiting: true });
    const waiting = await h.db.selectFrom('posts').selectAll().where('id', '=', post.id).executeTakeFirstOrThrow();
    assert.equal(waiting.status, 'scheduled');

    // Renewed, the next claim looks first and finds what the earlier call sent.
    h.standIns.x.standIn.clearFaults();
    const step = await activities.claimAndPublish({ postId: post.id, now: now + 2 });
    assert.equal(step.attempt?.ok, true, JSON.stringify(step));
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === text).length, 1, 'sent once');
    assert.ok(waiting.publish_attempt_started_at !== null, 'the earlier call may have sent: its mark stayed while the post waited');
    assert.equal((await h.db.selectFrom('posts').select('status').where('id', '=', post.id).executeTakeFirstOrThrow()).status, 'published');
  });

  it("a scheduled thread's interrupted first part whose look a failing renewal stopped keeps its mark while the thread waits: once renewed it is found, not sent again", async () => {
    const { row, accessToken } = await renewableXAccount();
    await h.syncClock();
    const now = h.now().getTime();
    const texts: [string, string] = ['first part landed, then the worker stopped, then the token ended', 'its second part, once renewed'];
    const { threadId, partIds } = await scheduleThread(row.id, texts, now + 10 * 60_000);
    await endWaitingWorkflow(h, threadWorkflowId(threadId));
    const activities = activitiesKeepingCredentials();
    const due = now + 10 * 60_000;
    assert.equal((await activities.claimThread({ threadId, now: due })).kind, 'publish');
    assert.equal((await activities.publishThreadPart({ postId: partIds[0]!, replyTo: null })).ok, true);
    // Back to the state of a worker that stopped between X's answer and the store: the part's mark open, its id unknown.
    await h.db.updateTable('posts').set({ platform_post_id: null, platform_post_url: null, publish_attempt_started_at: new Date(due) }).where('id', '=', partIds[0]!).execute();
    h.standIns.x.expireAccessToken(accessToken);
    h.standIns.x.standIn.inject({ method: 'POST', path: '/2/oauth2/token' }, serviceUnavailable, 10);

    const stopped = await activities.publishThreadPart({ postId: partIds[0]!, replyTo: null });
    assert.deepEqual(stopped.ok === false ? [stopped.kind, stopped.awaitingCredential] : stopped, ['retryable', true]);
    // Nothing of it is stored live, so nothing is rolled back: the thread waits for the credential (as its workflow does).
    assert.deepEqual(await activities.awaitThreadCredential({ threadId, retryAt: due + 1, now: due }), { waiting: true });
    const waiting = await post(partIds[0]!);
    assert.equal(waiting.status, 'scheduled');

    h.standIns.x.standIn.clearFaults();
    assert.equal((await activities.claimThread({ threadId, now: due + 2 })).kind, 'publish');
    const first = await activities.publishThreadPart({ postId: partIds[0]!, replyTo: null });
    assert.equal(first.ok, true, JSON.stringify(first));
    const root = first.ok ? first.platformPostId : '';
    assert.equal((await activities.publishThreadPart({ postId: partIds[1]!, replyTo: { platformPostId: root, rootPlatformPostId: root } })).ok, true);
    assert.deepEqual(texts.map((text) => h.standIns.x.tweets().filter((t) => t.text === text).length), [1, 1], 'each part sent once');
    assert.ok(waiting.publish_attempt_started_at !== null, 'the earlier call may have sent: its mark stayed while the thread waited');
  });

  it('a post waits for a failing renewal an hour past its time, then its attempts count and it fails saying the renewal failed', async () => {
    const { row } = await renewableXAccount();
    const start = await h.env.currentTimeMs();
    const dueAt = start + 2 * HOUR + 2 * 60_000;
    const due = await schedule(row.id, 'due while the token endpoint stays down', dueAt);
    const reservedBefore = await h.db.selectFrom('quota_reservations').select(['kind', 'state']).where('post_id', '=', due).orderBy('kind').execute();
    assert.deepEqual(reservedBefore.map((r) => r.state), ['reserved', 'reserved']);
    h.standIns.x.standIn.inject({ method: 'POST', path: '/2/oauth2/token' }, serviceUnavailable, 100_000);
    await keeper().credentialStored(row.id);

    await h.env.sleep(dueAt - start + 55 * 60_000);
    await expectWaitingForCredential(due, '55 minutes past its time it still waits');

    await h.env.sleep(10 * 60_000);
    const counting = await post(due);
    assert.equal(counting.status, 'scheduled');
    assert.ok(counting.retry_count >= 1, `past the hour its attempts are failed ones (retry_count ${counting.retry_count})`);

    assert.deepEqual(await h.settle(due), { outcome: 'failed' });
    const failed = await post(due);
    assert.equal(failed.status, 'failed');
    assert.equal(failed.retry_count, 4, 'the attempt past the hour and three retries');
    assert.equal(failed.error_message, "X access for this account ended and Herald could not renew it for an hour past the post's time; reconnect the account if this goes on.");
    const refunded = await h.db.selectFrom('quota_reservations').select('state').where('post_id', '=', due).execute();
    assert.ok(refunded.every((r) => r.state === 'refunded'), JSON.stringify(refunded));
    assert.equal((await account(row.id)).active, true, 'the account stays: the renewal may still come back');
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === 'due while the token endpoint stays down').length, 0);
    await h.env.client.workflow.getHandle(credentialWorkflowId(row.id)).terminate('test done');
  });

  /** A thread of two parts on the account at `at`: its id and its parts' ids in order. */
  async function scheduleThread(accountId: string, texts: [string, string], at: number): Promise<{ threadId: string; partIds: string[] }> {
    await h.syncClock();
    const res = await h.api.request('POST', '/api/v1/threads', { body: { account_id: accountId, posts: texts.map((text) => ({ text })), schedule_at: new Date(at).toISOString() } });
    assert.equal(res.status, 201, res.text);
    return { threadId: res.body.data.thread_id, partIds: res.body.data.posts.map((p: { id: string }) => p.id) };
  }
  const threadOutcome = (threadId: string) => h.env.client.workflow.getHandle(threadWorkflowId(threadId)).result();

  it('a scheduled thread waits for a failing renewal as a post does, spending no retry, and publishes once the token is back', async () => {
    const { row } = await renewableXAccount();
    const start = await h.env.currentTimeMs();
    const texts: [string, string] = ['thread due while the token endpoint is down', 'its second part'];
    const { threadId, partIds } = await scheduleThread(row.id, texts, start + 2 * HOUR + 2 * 60_000);
    h.standIns.x.standIn.inject({ method: 'POST', path: '/2/oauth2/token' }, serviceUnavailable, 10_000);
    await keeper().credentialStored(row.id);

    // Due at 122 minutes; past 143 three spent retries (1, 5 and 15 minutes) would have failed it.
    await h.env.sleep(2 * HOUR + 45 * 60_000);
    for (const partId of partIds) await expectWaitingForCredential(partId, 'every part waits for the credential without spending a retry');
    const tries = h.standIns.x.standIn.calls('POST', '/2/tweets').filter((c) => c.json?.text === texts[0]).length;
    assert.ok(tries >= 2, `the thread looked again while waiting (${tries} refused creates of its first part)`);

    h.standIns.x.standIn.clearFaults();
    assert.deepEqual(await threadOutcome(threadId), { outcome: 'published', firstComment: null });
    const parts = await Promise.all(partIds.map(post));
    assert.deepEqual(parts.map((p) => [p.status, p.retry_count]), [['published', 0], ['published', 0]]);
    for (const text of texts) assert.equal(h.standIns.x.tweets().filter((t) => t.text === text).length, 1, text);
    await h.env.client.workflow.getHandle(credentialWorkflowId(row.id)).terminate('test done');
  });

  it('a scheduled thread waits an hour past its time for a failing renewal, then its attempts count and it fails saying why', async () => {
    const { row } = await renewableXAccount();
    const start = await h.env.currentTimeMs();
    const dueAt = start + 2 * HOUR + 2 * 60_000;
    const texts: [string, string] = ['thread due while the token endpoint stays down', 'its second part, never sent'];
    const { threadId, partIds } = await scheduleThread(row.id, texts, dueAt);
    h.standIns.x.standIn.inject({ method: 'POST', path: '/2/oauth2/token' }, serviceUnavailable, 100_000);
    await keeper().credentialStored(row.id);

    await h.env.sleep(dueAt - start + 55 * 60_000);
    for (const partId of partIds) await expectWaitingForCredential(partId, '55 minutes past its time it still waits');

    const outcome = (await threadOutcome(threadId)) as { outcome: string; message: string };
    const message =
      "X access for this account ended and Herald could not renew it for an hour past the thread's time; reconnect the account if this goes on (part 1 of 2). Nothing was published.";
    assert.deepEqual({ outcome: outcome.outcome, message: outcome.message }, { outcome: 'failed', message });
    const parts = await Promise.all(partIds.map(post));
    assert.deepEqual(
      parts.map((p) => [p.status, p.retry_count, p.error_message]),
      partIds.map(() => ['failed', 4, message]),
      'the attempt past the hour and three retries',
    );
    const refunded = await h.db.selectFrom('quota_reservations').select('state').where('post_id', 'in', partIds).execute();
    assert.ok(refunded.length > 0 && refunded.every((r) => r.state === 'refunded'), JSON.stringify(refunded));
    assert.equal((await account(row.id)).active, true, 'the account stays: the renewal may still come back');
    assert.equal(h.standIns.x.tweets().filter((t) => texts.includes(t.text)).length, 0);
    await h.env.client.workflow.getHandle(credentialWorkflowId(row.id)).terminate('test done');
  });

  it("a renewal refused for Herald's own app credentials keeps the account and its scheduled post, logs what to fix, and renews once fixed", async () => {
    const from = h.standIns.x.oauth.renewals.length;
    const { row, refreshToken } = await renewableXAccount();
    const start = await h.env.currentTimeMs();
    const due = await schedule(row.id, 'due while the app credentials are wrong', start + 2 * HOUR + 2 * 60_000);
    // X no longer takes the configured HERALD_X_CLIENT_SECRET: it answers every renewal 401 `unauthorized_client`.
    h.standIns.x.oauth.app.clientSecret = 'rotated-secret';
    try {
      await keeper().credentialStored(row.id);
      await h.env.sleep(2 * HOUR + 45 * 60_000);
      await expectWaitingForCredential(due, 'the post waits for the credential as for a transient failure');
      const kept = await account(row.id);
      assert.deepEqual({ active: kept.active, inactive_reason: kept.inactive_reason }, { active: true, inactive_reason: null }, 'never connection_lost');
      const refused = renewalsSince(from).filter((r) => r.refreshToken === refreshToken);
      assert.ok(refused.length >= 3 && refused.every((r) => r.outcome === 'bad_client'), JSON.stringify(refused));

      const lines: string[] = [];
      const logger = createLogger('error', { write: (line: string) => void lines.push(line) });
      const renewer = createXRenewer({ http, origin: h.standIns.x.origin, app: { clientId: 'conformance-client', clientSecret: 'conformance-secret' } });
      await assert.rejects(
        renewAccountCredential({ db: h.db, sealedBox: testSealedBox, renewers: { x: renewer }, logger }, row.id, { now: await h.env.currentTimeMs() }),
        RenewalSetupFailure,
      );
      assert.match(lines.join(''), /"level":"error".*check HERALD_X_CLIENT_ID and HERALD_X_CLIENT_SECRET/);
    } finally {
      h.standIns.x.oauth.app.clientSecret = 'conformance-secret';
    }

    assert.deepEqual(await h.settle(due), { outcome: 'published', firstComment: null });
    assert.equal((await post(due)).retry_count, 0);
    assert.equal((await credentialsOf(row.id)).refresh_token !== refreshToken, true, 'renewed with the refresh token it kept');
    await h.env.client.workflow.getHandle(credentialWorkflowId(row.id)).terminate('test done');
  });

  it('a post scheduled a week ahead on an x account publishes: the token is renewed 80+ times and the history stays short', async () => {
    const from = h.standIns.x.oauth.renewals.length;
    const { row } = await renewableXAccount();
    const start = await h.env.currentTimeMs();
    const weekAhead = await schedule(row.id, 'a week later', start + 7 * 24 * HOUR);
    await keeper().credentialStored(row.id);

    assert.deepEqual(await h.settle(weekAhead), { outcome: 'published', firstComment: null });
    const published = await post(weekAhead);
    assert.equal(published.status, 'published');
    assert.equal(published.retry_count, 0);
    const renewals = renewalsSince(from);
    assert.ok(renewals.length >= 80, `${renewals.length} renewals`);
    assert.deepEqual(renewals.filter((r) => r.outcome !== 'renewed'), []);
    assert.equal(new Set(renewals.map((r) => r.refreshToken)).size, renewals.length, 'each refresh token sent once');
    const handle = h.env.client.workflow.getHandle(credentialWorkflowId(row.id));
    const history = await handle.fetchHistory();
    assert.ok((history.events ?? []).length < 40, `the current run's history has ${history.events?.length} events`);
    const tweetCalls = h.standIns.x.standIn.calls('POST', '/2/tweets').filter((c) => c.json?.text === 'a week later');
    assert.equal(tweetCalls.length, 1, 'published with a live token at the first try');
    await handle.terminate('test done');
  });
});
