import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { endCallRefusal } from '../../src/accounts/mass-refusal';
import { createTestDatabase, type TestDatabase } from '../helpers/db';
import { silenceSdkLogs } from '../helpers/temporal';
import { startPostsHarness, type PostsHarness } from '../posts/harness';
import { insertAccount, insertMastodonAccount } from '../posts/fixtures';

/**
 * README "Credentials", 2026-12-07 evening: a 401 where nothing can renew the credential (x without a refresh token,
 * x OAuth 1.0a, mastodon, telegram, ...) no longer loses the account at the first refusal. It is held (the post
 * fails as a possible fault at the platform, the account and its scheduled posts are kept); refused again 10 minutes
 * after the first, outside a mass event, the connection is lost as before and the scheduled posts are cancelled with
 * `connection_lost`. The refusals' times are the database's: a test moves them back rather than skipping time.
 */

const HOUR = 60 * 60_000;
// `refusalHeldMessage` (credential-sentences.ts), written out: what the client is told while a refusal is held.
const refusalHeldMessage = (platform: string) => {
  const name = platform === 'x' ? 'X' : 'Mastodon';
  return `${name} refused this account's access, which may be a fault at ${name} rather than a lost connection, so nothing was sent; try again later, or reconnect the account if this goes on.`;
};
const unauthorized = { kind: 'reply' as const, response: { status: 401, json: { title: 'Unauthorized', type: 'about:blank', status: 401, detail: 'Unauthorized' } } };

describe('A credential nothing can renew, refused', function () {
  this.timeout(300_000);
  let h: PostsHarness;
  // A database of its own: a platform's refusals are counted over every account of the database.
  let database: TestDatabase;

  before(async () => {
    silenceSdkLogs('ERROR');
    database = await createTestDatabase();
    // An immediate post's retries after 20 ms, not 1 and 3 s: each of the many refused posts below waits them.
    h = await startPostsHarness({ plan: 'pro', database, posts: { immediateRetryDelaysMs: [20, 20] } });
  });
  after(async () => {
    await h?.stop();
    await database?.close();
  });
  afterEach(async () => {
    h.standIns.x.standIn.clearFaults();
    h.standIns.mastodon.standIn.clearFaults();
    // An hour later: nothing refused lately.
    await h.db.deleteFrom('credential_refusals').execute();
  });

  const account = (id: string) => h.db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const post = (id: string) => h.db.selectFrom('posts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const stateOf = async (id: string) => {
    const row = await account(id);
    return { active: row.active, inactive_reason: row.inactive_reason };
  };
  /** The account's refusals began `minutes` earlier than recorded (the database's clock cannot be skipped). */
  const refusedEarlier = (minutes: number) =>
    sql`update credential_refusals set first_refused_at = first_refused_at - make_interval(mins => ${minutes})`.execute(h.db);

  /** An x account connected with an OAuth 2.0 access token and no refresh token: nothing can renew it. */
  async function xWithoutRefreshToken() {
    const token = `token-${randomUUID()}`;
    const user = h.standIns.x.addUser({ username: `user${randomUUID().slice(0, 8)}`, bearerToken: token });
    const now = await h.env.currentTimeMs();
    const row = await insertAccount(h.db, h.api.userId, {
      platform: 'x',
      platform_account_id: user.id,
      username: user.username,
      credentials: { access_token: token },
      settings: { user_id: user.id, username: user.username },
      credential_issued_at: new Date(now),
      credential_expires_at: new Date(now + 2 * HOUR),
    });
    return { row, user };
  }

  async function schedule(accountId: string, text: string, at: number): Promise<string> {
    await h.syncClock();
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: accountId, text, schedule_at: new Date(at).toISOString() } });
    assert.equal(res.status, 201, res.text);
    return res.body.data.id;
  }

  /** Real-time wait for what the worker finishes after the API answered. */
  async function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) assert.fail(`timed out waiting for: ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  const publishNow = (accountId: string, text: string) => h.api.request('POST', '/api/v1/posts', { body: { account_id: accountId, text } });

  it('a platform answering 401 to every create keeps the accounts, also past 10 minutes while many are refused; they publish once it answers', async () => {
    const xs = [];
    for (let i = 0; i < 6; i++) xs.push((await xWithoutRefreshToken()).row);
    const mastodon = await insertMastodonAccount(h.db, h.api.userId, h.standIns.mastodon);
    const start = await h.env.currentTimeMs();
    const scheduled = [];
    for (const row of [...xs, mastodon]) scheduled.push(await schedule(row.id, `scheduled during the outage ${row.id}`, start + 5 * HOUR));
    h.standIns.x.standIn.inject({ method: 'POST', path: '/2/tweets' }, unauthorized, 1_000);
    h.standIns.mastodon.standIn.inject({ method: 'POST', path: '/api/v1/statuses' }, { kind: 'reply', response: { status: 401, json: { error: 'The access token is invalid' } } }, 1_000);

    for (const row of [...xs, mastodon]) {
      const res = await publishNow(row.id, `refused by an outage ${row.id}`);
      assert.equal(res.status, 502, res.text);
      assert.equal(res.body.error.message, refusalHeldMessage(row.platform));
      assert.deepEqual(await stateOf(row.id), { active: true, inactive_reason: null }, `${row.platform} account kept at its first refusal`);
    }
    // The outage goes on past 10 minutes: six x accounts refused within the hour is a mass event, so still held.
    await refusedEarlier(11);
    for (const row of xs) {
      const res = await publishNow(row.id, `still refused ${row.id}`);
      assert.equal(res.status, 502, res.text);
      assert.equal(res.body.error.message, refusalHeldMessage('x'));
      assert.deepEqual(await stateOf(row.id), { active: true, inactive_reason: null }, 'x account kept amid many refusals');
    }
    for (const id of scheduled) assert.equal((await post(id)).status, 'scheduled', 'no scheduled post is cancelled');

    h.standIns.x.standIn.clearFaults();
    h.standIns.mastodon.standIn.clearFaults();
    for (const row of [xs[0]!, mastodon]) {
      const res = await publishNow(row.id, `after the outage ${row.id}`);
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.data.status, 'published');
    }
  });

  it('a revoked token is held at its first refusal, then lost at one 10 minutes later: its scheduled posts are cancelled with connection_lost', async () => {
    const { row, user } = await xWithoutRefreshToken();
    const start = await h.env.currentTimeMs();
    const later = await schedule(row.id, 'scheduled after the revocation', start + HOUR);
    user.bearerToken = `revoked-${randomUUID()}`;

    const first = await publishNow(row.id, 'refused once');
    assert.equal(first.status, 502, first.text);
    assert.equal(first.body.error.message, refusalHeldMessage('x'));
    assert.deepEqual(await stateOf(row.id), { active: true, inactive_reason: null }, 'held at the first refusal');
    assert.equal((await post(later)).status, 'scheduled');

    // Refused again 11 minutes after the first: the user's own refusal, as before this change.
    await refusedEarlier(11);
    const again = await publishNow(row.id, 'refused again');
    assert.equal(again.status, 502, again.text);
    assert.equal(again.body.error.message, "X no longer accepts this account's credentials; reconnect the account.");
    // The post's failure is answered as it is written; the account's loss and the cancellation follow in its workflow.
    await eventually('the account lost', async () => (await account(row.id)).inactive_reason === 'connection_lost');
    assert.deepEqual(await stateOf(row.id), { active: false, inactive_reason: 'connection_lost' });
    await eventually('the scheduled post cancelled', async () => (await post(later)).status === 'deleted');
    const cancelled = await post(later);
    assert.deepEqual({ status: cancelled.status, error_message: cancelled.error_message }, { status: 'deleted', error_message: 'connection_lost' });
  });

  // An immediate post is tried three times (`immediateRetryDelaysMs`): a passing fault refuses all three.
  it('a held refusal ends at the next successful call: a second, unrelated 401 10 minutes on is held again, not a lost connection', async () => {
    const { row } = await xWithoutRefreshToken();
    h.standIns.x.standIn.inject({ method: 'POST', path: '/2/tweets' }, unauthorized, 3);
    const first = await publishNow(row.id, 'refused by a passing fault');
    assert.equal(first.status, 502, first.text);
    assert.equal(first.body.error.message, refusalHeldMessage('x'));

    const published = await publishNow(row.id, 'X answers again');
    assert.equal(published.status, 201, published.text);
    assert.equal(published.body.data.status, 'published');
    // The success ended the hold: nothing is left to confirm.
    const after = { mark: (await account(row.id)).credential_refused_at, refusal: await h.db.selectFrom('credential_refusals').select('account_id').where('account_id', '=', row.id).executeTakeFirst() };

    // Another passing 401, more than 10 minutes after the first and within its hour: a new run, held again.
    await refusedEarlier(11);
    h.standIns.x.standIn.inject({ method: 'POST', path: '/2/tweets' }, unauthorized, 3);
    const second = await publishNow(row.id, 'refused by another passing fault');
    assert.equal(second.status, 502, second.text);
    assert.equal(second.body.error.message, refusalHeldMessage('x'));
    assert.deepEqual(await stateOf(row.id), { active: true, inactive_reason: null }, 'kept: the two refusals were not one run');
    assert.deepEqual(after, { mark: null, refusal: undefined });
    assert.notEqual((await account(row.id)).credential_refused_at, null, 'the new refusal is marked on the account row');
  });

  it('a success while another refusal was recorded since the attempt read the row keeps that refusal', async () => {
    const { row } = await xWithoutRefreshToken();
    h.standIns.x.standIn.inject({ method: 'POST', path: '/2/tweets' }, unauthorized, 3);
    assert.equal((await publishNow(row.id, 'refused once')).status, 502);
    const read = (await account(row.id)).credential_refused_at!;
    // Another call's refusal lands after this attempt's read (the mark moves on).
    await sql`update accounts set credential_refused_at = credential_refused_at + interval '5 milliseconds' where id = ${row.id}`.execute(h.db);
    assert.equal(await endCallRefusal(h.db, row.id, read), false);
    assert.notEqual((await h.db.selectFrom('credential_refusals').select('account_id').where('account_id', '=', row.id).executeTakeFirst()), undefined, 'the later refusal is kept');
  });

  it('a reconnect ends the refusals before it: a 401 after it is held, not taken as the old run confirmed', async () => {
    const { row, user } = await xWithoutRefreshToken();
    user.bearerToken = `revoked-${randomUUID()}`;
    assert.equal((await publishNow(row.id, 'refused once')).status, 502);
    await refusedEarlier(11);
    assert.equal((await publishNow(row.id, 'refused again')).status, 502);
    await eventually('the account lost', async () => (await account(row.id)).inactive_reason === 'connection_lost');

    const token = `token-${randomUUID()}`;
    user.bearerToken = token;
    const reconnected = await h.api.request('POST', '/api/v1/accounts', { body: { platform: 'x', access_token: token } });
    assert.equal(reconnected.status, 200, reconnected.text);
    assert.deepEqual(await stateOf(row.id), { active: true, inactive_reason: null });

    h.standIns.x.standIn.inject({ method: 'POST', path: '/2/tweets' }, unauthorized, 3);
    const refused = await publishNow(row.id, 'refused by a passing fault after the reconnect');
    assert.equal(refused.status, 502, refused.text);
    assert.equal(refused.body.error.message, refusalHeldMessage('x'));
    assert.deepEqual(await stateOf(row.id), { active: true, inactive_reason: null }, 'a first refusal after the reconnect is held');
  });

  it('a scheduled post that meets a refusal 10 minutes after the first is cancelled with connection_lost, its account lost', async () => {
    const mastodon = await insertMastodonAccount(h.db, h.api.userId, h.standIns.mastodon);
    const start = await h.env.currentTimeMs();
    const due = await schedule(mastodon.id, 'due after the revocation', start + 5 * 60_000);
    h.standIns.mastodon.standIn.inject({ method: 'POST', path: '/api/v1/statuses' }, { kind: 'reply', response: { status: 401, json: { error: 'The access token is invalid' } } }, 1_000);
    const first = await publishNow(mastodon.id, 'refused once');
    assert.equal(first.status, 502, first.text);
    assert.deepEqual(await stateOf(mastodon.id), { active: true, inactive_reason: null });
    await refusedEarlier(11);
    await h.settle(due);
    const cancelled = await post(due);
    assert.deepEqual({ status: cancelled.status, error_message: cancelled.error_message }, { status: 'deleted', error_message: 'connection_lost' });
    assert.deepEqual(await stateOf(mastodon.id), { active: false, inactive_reason: 'connection_lost' });
  });
});
