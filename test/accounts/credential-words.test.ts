import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { credentialWorkflowId, createCredentialKeeper } from '../../src/accounts/credential-workflow-client';
import { openCredentials } from '../../src/accounts/credentials';
import type { AccountRow } from '../../src/db/tables/accounts';
import { createHttpClient } from '../../src/net/http';
import { createGraphRenewer } from '../../src/platforms/graph/refresh';
import { createXRenewer } from '../../src/platforms/x/refresh';
import { comment, publish, snapshot } from '../comments/actions-fixtures';
import { testConfig } from '../helpers/api';
import { silenceSdkLogs } from '../helpers/temporal';
import { insertAccount, testSealedBox } from '../posts/fixtures';
import { startPostsHarness, type PostsHarness } from '../posts/harness';

/**
 * What a client is told when an account's credential ended and Herald could not renew it (README "Credentials"), and
 * switched-off accounts whose tokens renew themselves: they are still renewed, and one whose credential ended for good
 * asks for a reconnect when switched back on (README "Accounts"). The stand-ins judge token lifetimes by the workflow clock.
 */

const HOUR = 60 * 60_000;
const DAY = 24 * HOUR;
const serviceUnavailable = { kind: 'reply' as const, response: { status: 503, json: { error: 'temporarily_unavailable' } } };
const pendingSentence = 'X access for this account ended and Herald could not renew it just now, so nothing was sent; try again later, or reconnect the account if this goes on.';
const reconnectSentence = (name: string) => `${name} no longer accepts this account's credentials; reconnect it with POST /api/v1/accounts`;

describe('Credentials: what clients are told, and switched-off accounts', function () {
  this.timeout(300_000);
  let h: PostsHarness;
  const http = createHttpClient({ allowInsecure: true, timeoutMs: 5_000 });

  before(async function () {
    silenceSdkLogs('ERROR');
    const renewers = { x: createXRenewer({ http, origin: 'http://placeholder.invalid', app: { clientId: 'conformance-client', clientSecret: 'conformance-secret' } }) };
    h = await startPostsHarness({ plan: 'pro', config: testConfig({ HERALD_COMING_SOON: 'tiktok,youtube,pinterest,google_business', HERALD_X_CLIENT_ID: 'conformance-client', HERALD_X_CLIENT_SECRET: 'conformance-secret' }), posts: { renewers, renewalPatienceMs: [20, 20] } });
    // The stand-ins start inside the harness: point the renewers at them now that their origins are known.
    Object.assign(renewers, {
      x: createXRenewer({ http, origin: h.standIns.x.origin, app: { clientId: 'conformance-client', clientSecret: 'conformance-secret' } }),
      threads: createGraphRenewer({ http, platform: 'threads', apiUrl: h.standIns.threads.origin }),
    });
    h.standIns.x.standIn.clock = () => h.env.currentTimeMs();
    h.standIns.threads.standIn.clock = () => h.env.currentTimeMs();
  });
  after(async () => {
    await h?.stop();
    await http.close();
  });
  afterEach(() => h.standIns.x.standIn.clearFaults());

  const account = (id: string) => h.db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const credentialsOf = async (id: string) => {
    const row = await account(id);
    return openCredentials(testSealedBox, row.user_id, row.credentials_sealed!);
  };

  async function renewableXAccount(): Promise<{ row: AccountRow; accessToken: string; refreshToken: string }> {
    const now = await h.env.currentTimeMs();
    const user = h.standIns.x.addUser({ username: `user${randomUUID().slice(0, 8)}` });
    const pair = h.standIns.x.issueTokens(user, now, 7200);
    const row = await insertAccount(h.db, h.api.userId, {
      platform: 'x',
      platform_account_id: user.id,
      username: user.username,
      credentials: { access_token: pair.accessToken, refresh_token: pair.refreshToken },
      settings: { user_id: user.id, username: user.username },
      credential_issued_at: new Date(now),
      credential_expires_at: new Date(now + 2 * HOUR),
    });
    return { row, ...pair };
  }

  async function threadsAccount(options: { issuedAt: number; endsAt: number; active?: boolean }): Promise<{ row: AccountRow; token: string }> {
    const token = h.standIns.threads.tokens.issue(options.issuedAt, (options.endsAt - options.issuedAt) / 1000, options.issuedAt);
    const user = h.standIns.threads.user;
    const row = await insertAccount(h.db, h.api.userId, {
      platform: 'threads',
      platform_account_id: `${user.id}-${randomUUID().slice(0, 8)}`,
      username: user.username,
      credentials: { access_token: token },
      settings: { threadsUserId: user.id },
      credential_issued_at: new Date(options.issuedAt),
      credential_expires_at: new Date(options.endsAt),
      ...(options.active === false ? { active: false, inactive_reason: 'deactivated' as const } : {}),
    });
    return { row, token };
  }

  it('an immediate post, a reply and a delete whose renewal keeps failing say that nothing was sent and what to do, never that Herald tries again', async () => {
    const { row, accessToken } = await renewableXAccount();
    await h.syncClock();
    const published = await publish(h, row.id, 'published before the token ended');
    const stranger = h.standIns.x.addUser({ username: `stranger${randomUUID().slice(0, 8)}` });
    h.standIns.x.addReply(published.platform_post_id, stranger, 'a question before the token ended');
    await snapshot(h, published.id);
    const target = await comment(h, published.id, 'a question before the token ended');

    h.standIns.x.expireAccessToken(accessToken);
    h.standIns.x.standIn.inject({ method: 'POST', path: '/2/oauth2/token' }, serviceUnavailable, 1_000);

    await h.syncClock();
    const immediate = await h.api.request('POST', '/api/v1/posts', { body: { account_id: row.id, text: 'immediate, token endpoint down' } });
    assert.equal(immediate.status, 502, immediate.text);
    assert.deepEqual([immediate.body.error.code, immediate.body.error.message], ['upstream_error', pendingSentence]);

    const reply = await h.api.request('POST', `/api/v1/posts/${published.id}/comments/${target.id}/reply`, { body: { text: 'a reply, token endpoint down' } });
    assert.equal(reply.status, 502, reply.text);
    assert.deepEqual([reply.body.error.code, reply.body.error.message], ['upstream_error', pendingSentence]);

    const del = await h.api.request('DELETE', `/api/v1/posts/${published.id}`);
    assert.equal(del.status, 502, del.text);
    assert.deepEqual([del.body.error.code, del.body.error.message], ['upstream_error', pendingSentence]);

    assert.equal(h.standIns.x.tweets().filter((t) => t.text.includes('token endpoint down')).length, 0, 'nothing was sent');
    assert.equal((await account(row.id)).active, true, 'a transient failure never loses the connection');
  });

  it('a switched-off threads account is still renewed ahead of its end, so switching it back on works', async () => {
    const now = await h.env.currentTimeMs();
    const { row, token } = await threadsAccount({ issuedAt: now, endsAt: now + 60 * DAY });
    await createCredentialKeeper(h.env.client, h.taskQueue).credentialStored(row.id);
    const off = await h.api.request('PATCH', `/api/v1/accounts/${row.id}`, { body: { active: false } });
    assert.equal(off.body.data?.inactive_reason, 'deactivated', off.text);

    // Renewed at 80% of its 60 days (48 days), while switched off.
    await h.env.sleep(49 * DAY);
    const deadline = Date.now() + 30_000;
    while ((await credentialsOf(row.id)).access_token === token && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.notEqual((await credentialsOf(row.id)).access_token, token, 'renewed while switched off');
    const renewed = await account(row.id);
    assert.deepEqual({ active: renewed.active, inactive_reason: renewed.inactive_reason }, { active: false, inactive_reason: 'deactivated' }, 'still switched off');

    await h.syncClock();
    const on = await h.api.request('PATCH', `/api/v1/accounts/${row.id}`, { body: { active: true } });
    assert.equal(on.status, 200, on.text);
    await h.env.client.workflow.getHandle(credentialWorkflowId(row.id)).terminate('test done');
  });

  it('switching back on an account whose credential ended for good answers 400 "reconnect"; one a refresh token still renews is switched on', async () => {
    const now = Date.now();
    // A Threads token that ended while switched off can never be renewed (protocols.md section 13).
    const { row: threads } = await threadsAccount({ issuedAt: now - 70 * DAY, endsAt: now - 10 * DAY, active: false });
    const threadsOn = await h.api.request('PATCH', `/api/v1/accounts/${threads.id}`, { body: { active: true } });
    assert.deepEqual([threadsOn.status, threadsOn.body.error?.code, threadsOn.body.error?.message], [400, 'bad_request', reconnectSentence('Threads')], threadsOn.text);
    assert.deepEqual(await account(threads.id).then((a) => [a.active, a.inactive_reason]), [false, 'deactivated'], 'left as it was');

    // An x account whose refresh token was dropped after a refused renewal, its access token ended.
    const { row: dropped } = await renewableXAccount();
    await h.db.updateTable('accounts').set({ active: false, inactive_reason: 'deactivated', credential_expires_at: new Date(now - HOUR) }).where('id', '=', dropped.id).execute();
    await h.db.updateTable('accounts').set({ credentials_sealed: testSealedBox.seal(JSON.stringify({ access_token: 'ended' }), h.api.userId) }).where('id', '=', dropped.id).execute();
    const droppedOn = await h.api.request('PATCH', `/api/v1/accounts/${dropped.id}`, { body: { active: true } });
    assert.deepEqual([droppedOn.status, droppedOn.body.error?.message], [400, reconnectSentence('X')], droppedOn.text);

    // An x account holding its refresh token: the ended access token is renewed once it is on.
    const { row: holding } = await renewableXAccount();
    await h.db.updateTable('accounts').set({ active: false, inactive_reason: 'deactivated', credential_expires_at: new Date(now - HOUR) }).where('id', '=', holding.id).execute();
    const holdingOn = await h.api.request('PATCH', `/api/v1/accounts/${holding.id}`, { body: { active: true } });
    assert.equal(holdingOn.status, 200, holdingOn.text);
    assert.equal(holdingOn.body.data.active, true);
    await h.env.client.workflow.getHandle(credentialWorkflowId(holding.id)).terminate('test done').catch(() => undefined);
  });
});
