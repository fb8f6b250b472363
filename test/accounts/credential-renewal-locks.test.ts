import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { createActivities } from '../../activities';
import { renewAccountCredential, type CredentialRenewalDeps } from '../../src/accounts/credential-renewal';
import type { AccountLifecycle } from '../../src/accounts/lifecycle';
import type { AccountRow, AccountUpdate } from '../../src/db/tables/accounts';
import { createLogger } from '../../src/logger';
import { createMediaStore } from '../../src/media/store';
import { createHttpClient } from '../../src/net/http';
import { createXRenewer } from '../../src/platforms/x/refresh';
import { createPostsLifecycle } from '../../src/posts/cancel';
import { testConfig } from '../helpers/api';
import { silenceSdkLogs } from '../helpers/temporal';
import { insertAccount, insertMastodonAccount, insertXAccount, testSealedBox } from '../posts/fixtures';
import { startPostsHarness, type PostsHarness } from '../posts/harness';
import { threadWorkflowId } from '../../src/threads/workflow-client';

/**
 * A renewal and the rest of Herald (README "Credentials", 2026-12-07): a renewal held at a slow token endpoint holds
 * back no create (its account row lock is FOR NO KEY UPDATE, and so is the user row lock a switch-off waiting on it
 * holds), and waits for the token endpoint 10 s at most; a retried renewal stores an end counted from when it
 * succeeded; a cancellation that failed after the account was lost is finished by the retry; and a scheduled post
 * whose account is found switched off at its time is cancelled with the account's reason, not failed.
 */

const HOUR = 60 * 60_000;
const TOKEN_PATH = '/2/oauth2/token';

describe('Credential renewals beside creates, retries and lost cancellations', function () {
  this.timeout(300_000);
  let h: PostsHarness;
  // No timeout of its own: the platforms' default (30 s), so the token endpoint's own bound is what is seen.
  const http = createHttpClient({ allowInsecure: true });
  const renewers: CredentialRenewalDeps['renewers'] = {};
  const logger = createLogger('silent');

  before(async function () {
    silenceSdkLogs('ERROR');
    h = await startPostsHarness({ plan: 'pro', posts: { renewers, renewalPatienceMs: [20, 20] } });
    Object.assign(renewers, { x: createXRenewer({ http, origin: h.standIns.x.origin, app: { clientId: 'conformance-client', clientSecret: 'conformance-secret' } }) });
    h.standIns.x.standIn.clock = () => h.env.currentTimeMs();
  });
  after(async () => {
    await h?.stop();
    await http.close();
  });
  afterEach(() => h.standIns.x.standIn.clearFaults());

  const lifecycle = (): AccountLifecycle => createPostsLifecycle({ db: h.db, mediaStore: createMediaStore(h.db as never), temporal: h.env.client, logger });
  const deps = (overrides: Partial<CredentialRenewalDeps> = {}): CredentialRenewalDeps => ({ db: h.db, sealedBox: testSealedBox, renewers, logger, lifecycle: lifecycle(), ...overrides });
  const account = (id: string) => h.db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const post = (id: string) => h.db.selectFrom('posts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const tokenCalls = () => h.standIns.x.standIn.calls('POST', TOKEN_PATH).length;

  /** An x account with OAuth 2.0 tokens the stand-in issued; issue time and end as given (ms), for renewals to find due. */
  async function renewableXAccount(times: { issuedAt?: number; expiresAt?: number } = {}): Promise<{ row: AccountRow; refreshToken: string; user: ReturnType<PostsHarness['standIns']['x']['addUser']> }> {
    const now = await h.env.currentTimeMs();
    const user = h.standIns.x.addUser({ username: `user${randomUUID().slice(0, 8)}` });
    const pair = h.standIns.x.issueTokens(user, now, 7200);
    const row = await insertAccount(h.db, h.api.userId, {
      platform: 'x',
      platform_account_id: user.id,
      username: user.username,
      credentials: { access_token: pair.accessToken, refresh_token: pair.refreshToken },
      settings: { user_id: user.id, username: user.username },
      credential_issued_at: new Date(times.issuedAt ?? now),
      credential_expires_at: new Date(times.expiresAt ?? now + 2 * HOUR),
    });
    return { row, refreshToken: pair.refreshToken, user };
  }

  async function schedule(accountId: string, text: string, at: number): Promise<string> {
    await h.syncClock();
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: accountId, text, schedule_at: new Date(at).toISOString() } });
    assert.equal(res.status, 201, res.text);
    return res.body.data.id;
  }

  async function eventually(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) assert.fail(`timed out waiting for: ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it("a renewal held at the token endpoint holds back no create: not the account's, nor the user's others while a PATCH waits on it", async () => {
    const { row } = await renewableXAccount();
    const other = await insertMastodonAccount(h.db, h.api.userId, h.standIns.mastodon);
    const start = await h.env.currentTimeMs();
    h.standIns.x.standIn.inject({ method: 'POST', path: TOKEN_PATH }, { kind: 'delay', ms: 4_000 });
    const asked = tokenCalls();
    let renewed = false;
    const renewal = renewAccountCredential(deps(), row.id, { now: start }).finally(() => (renewed = true));
    await eventually('the token endpoint is asked', () => tokenCalls() > asked);
    // A PATCH of the account waits for the renewal's row lock (they serialise), holding the user's row meanwhile.
    let patched = false;
    const patch = h.api.request('PATCH', `/api/v1/accounts/${row.id}`, { body: { timezone: 'Europe/Paris' } }).finally(() => (patched = true));
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(patched, false, 'the PATCH waits for the renewal');

    const sameAccount = await schedule(row.id, 'scheduled while its account is being renewed', start + 5 * HOUR);
    const otherAccount = await schedule(other.id, 'scheduled on another account meanwhile', start + 5 * HOUR);
    assert.equal(renewed, false, 'both creates answered while the renewal still waited for the token endpoint');
    assert.equal((await renewal).kind, 'renewed');
    assert.equal((await patch).status, 200);
    for (const id of [sameAccount, otherAccount]) assert.equal((await post(id)).status, 'scheduled');
    assert.equal((await account(row.id)).timezone, 'Europe/Paris');
  });

  it('a reconnect during a renewal the platform then refuses waits for it and is answered 200: active, its own tokens stored', async () => {
    const { row, refreshToken, user } = await renewableXAccount();
    const start = await h.env.currentTimeMs();
    const postId = await schedule(row.id, 'scheduled before the connection was lost', start + 5 * HOUR);
    h.standIns.x.revokeRefreshToken(refreshToken);
    h.standIns.x.standIn.inject({ method: 'POST', path: TOKEN_PATH }, { kind: 'delay', ms: 2_000 });
    const asked = tokenCalls();
    const renewal = renewAccountCredential(deps(), row.id, { now: start });
    await eventually('the token endpoint is asked', () => tokenCalls() > asked);
    // The user reconnects the same X account with a new pair while the renewal waits for X.
    const fresh = h.standIns.x.issueTokens(user, start);
    let answered = false;
    const reconnect = h.api.request('POST', '/api/v1/accounts', { body: { access_token: fresh.accessToken, refresh_token: fresh.refreshToken } }).finally(() => (answered = true));
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(answered, false, 'the reconnect waits for the renewal (its row lock)');

    assert.equal((await renewal).kind, 'lost', 'X refused the old refresh token: the connection was lost first');
    const res = await reconnect;
    assert.equal(res.status, 200, res.text);
    assert.deepEqual({ id: res.body.data.id, active: res.body.data.active, inactive_reason: res.body.data.inactive_reason }, { id: row.id, active: true, inactive_reason: null });
    const stored = await account(row.id);
    assert.deepEqual({ active: stored.active, inactive_reason: stored.inactive_reason }, { active: true, inactive_reason: null }, 'the reconnect is not lost');
    const credentials = JSON.parse(testSealedBox.open(stored.credentials_sealed!, stored.user_id)) as Record<string, string>;
    assert.deepEqual({ access: credentials.access_token, refresh: credentials.refresh_token }, { access: fresh.accessToken, refresh: fresh.refreshToken });
    // The loss committed before the reconnect: the posts scheduled before it were cancelled with it (README "Credentials").
    assert.deepEqual(await eventuallyPost(postId), { status: 'deleted', error_message: 'connection_lost' });
  });

  async function eventuallyPost(postId: string): Promise<{ status: string; error_message: string | null }> {
    await eventually('the lost account\'s cancellation ran', async () => (await post(postId)).status !== 'scheduled');
    const { status, error_message } = await post(postId);
    return { status, error_message };
  }

  it('a token endpoint that never answers is given up after 10 s (not the platforms\' 30 s): nothing stored, retried later', async () => {
    const { row, refreshToken } = await renewableXAccount();
    h.standIns.x.standIn.inject({ method: 'POST', path: TOKEN_PATH }, { kind: 'hang' });
    const started = Date.now();
    await assert.rejects(renewAccountCredential(deps(), row.id, { now: await h.env.currentTimeMs() }), (err: Error & { kind?: string }) => err.kind === 'retryable');
    const waited = Date.now() - started;
    assert.ok(waited >= 9_500 && waited < 15_000, `gave up after ${waited} ms`);
    const stored = await account(row.id);
    assert.equal(stored.active, true);
    assert.equal(h.standIns.x.oauth.refresh.get(refreshToken)?.spent, false, 'the stand-in never took it: the same token renews later');
  });

  it('a renewal retried hours after its workflow asked stores an issue time and end counted from when it succeeded', async () => {
    // The workflow asked at `asked` (3 hours ago in real time), when the credential was due; every retry since got that
    // same `now`, until the token endpoint came back.
    const asked = Date.now() - 3 * HOUR;
    const { row } = await renewableXAccount({ issuedAt: asked - 2 * HOUR, expiresAt: asked + 5 * 60_000 });
    const activities = createActivities({ config: testConfig(), db: h.db, logger, posts: { adapters: h.standIns.adapters, sealedBox: testSealedBox, renewers } });
    const before = Date.now();
    const outcome = await activities.renewCredential({ accountId: row.id, now: asked });
    assert.equal(outcome.kind, 'renewed');
    const stored = await account(row.id);
    assert.ok(stored.credential_issued_at!.getTime() >= before, `issued at ${stored.credential_issued_at!.toISOString()}, asked ${new Date(asked).toISOString()}`);
    assert.equal(stored.credential_expires_at!.getTime() - stored.credential_issued_at!.getTime(), 2 * HOUR);
    assert.ok(stored.credential_expires_at!.getTime() > Date.now() + HOUR, 'the stored end is ahead, not already past');
  });

  it('a cancellation that failed after a refused renewal lost the connection is finished by the retried renewal', async () => {
    const { row, refreshToken } = await renewableXAccount();
    const start = await h.env.currentTimeMs();
    const postId = await schedule(row.id, 'never sent: its connection is lost', start + 3 * HOUR);
    h.standIns.x.revokeRefreshToken(refreshToken);
    let failuresLeft = 1;
    const real = lifecycle();
    const failingOnce: AccountLifecycle = {
      accountDeactivated: async (accountId, reason) => {
        if (failuresLeft-- > 0) throw new Error('the database went away during the cancellation');
        await real.accountDeactivated(accountId, reason);
      },
    };
    await assert.rejects(renewAccountCredential(deps({ lifecycle: failingOnce }), row.id, { now: start }), /database went away/);
    assert.equal((await account(row.id)).inactive_reason, 'connection_lost', 'the account change committed');
    assert.equal((await post(postId)).status, 'scheduled', 'the cancellation did not happen');

    // Temporal retries the activity: the account is found lost already.
    const retried = await renewAccountCredential(deps({ lifecycle: failingOnce }), row.id, { now: start });
    assert.equal(retried.kind, 'gone');
    const cancelled = await post(postId);
    assert.deepEqual({ status: cancelled.status, error_message: cancelled.error_message }, { status: 'deleted', error_message: 'connection_lost' });
  });

  it('a scheduled post whose account is found switched off at its time is cancelled with the matching reason, not failed', async () => {
    const cases: Array<{ change: AccountUpdate; reason: string }> = [
      { change: { active: false, inactive_reason: 'disconnected', credentials_sealed: null }, reason: 'account_disconnected' },
      { change: { active: false, inactive_reason: 'connection_lost' }, reason: 'connection_lost' },
      { change: { active: false, inactive_reason: 'deactivated' }, reason: 'account_deactivated' },
    ];
    const start = await h.env.currentTimeMs();
    const posts: Array<{ postId: string; reason: string }> = [];
    for (const { change, reason } of cases) {
      const x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
      const postId = await schedule(x.id, `never sent: ${reason}`, start + 30 * 60_000);
      // The account's change committed and its cancellation never ran (it failed, or the create raced the change).
      await h.db.updateTable('accounts').set(change).where('id', '=', x.id).execute();
      posts.push({ postId, reason });
    }
    for (const { postId, reason } of posts) {
      await h.settle(postId);
      const ended = await post(postId);
      assert.deepEqual({ status: ended.status, error_message: ended.error_message, retry_count: ended.retry_count }, { status: 'deleted', error_message: reason, retry_count: 0 }, reason);
      const events = await h.db.selectFrom('events').select('type').where('user_id', '=', h.api.userId).where(sql<string>`data->>'id'`, '=', postId).execute();
      const types = events.map((event) => event.type);
      assert.ok(types.includes('post.cancelled'), `${reason}: ${types.join(', ')}`);
      assert.ok(!types.includes('post.failed'), `${reason}: ${types.join(', ')}`);
      const reservations = await h.db.selectFrom('quota_reservations').select('state').where('post_id', '=', postId).execute();
      assert.ok(reservations.length > 0 && reservations.every((reservation) => reservation.state === 'refunded'), `${reason}: quota returned`);
    }
    assert.equal(h.standIns.x.tweets().filter((t) => t.text.startsWith('never sent')).length, 0);
  });

  it('a scheduled thread whose account is found disconnected at its time is cancelled whole with account_disconnected', async () => {
    const x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const start = await h.env.currentTimeMs();
    await h.syncClock();
    const texts = ['never sent: a thread on a disconnected account', 'never sent: its second part'];
    const res = await h.api.request('POST', '/api/v1/threads', { body: { account_id: x.id, posts: texts.map((text) => ({ text })), schedule_at: new Date(start + 30 * 60_000).toISOString() } });
    assert.equal(res.status, 201, res.text);
    const threadId: string = res.body.data.thread_id;
    const partIds: string[] = res.body.data.posts.map((p: { id: string }) => p.id);
    await h.db.updateTable('accounts').set({ active: false, inactive_reason: 'disconnected', credentials_sealed: null }).where('id', '=', x.id).execute();

    await h.env.client.workflow.getHandle(threadWorkflowId(threadId)).result();
    for (const partId of partIds) {
      const part = await post(partId);
      assert.deepEqual({ status: part.status, error_message: part.error_message }, { status: 'deleted', error_message: 'account_disconnected' });
      const reservations = await h.db.selectFrom('quota_reservations').select('state').where('post_id', '=', partId).execute();
      assert.ok(reservations.every((reservation) => reservation.state === 'refunded'), 'quota returned');
    }
    assert.equal(h.standIns.x.tweets().filter((t) => texts.includes(t.text)).length, 0);
  });
});
