import assert from 'node:assert/strict';
import type { AccountRow } from '../../src/db/tables/accounts';
import { CreationReads } from '../../src/posts/creation-reads';
import { usageMonth } from '../../src/quota/quota';
import { setPlan } from '../../src/users/users';
import { insertXAccount } from './fixtures';
import { startPostsHarness, type PostsHarness } from './harness';

/**
 * A create reads its accounts and the user's limits from what this API process read last (`CreationReads`), and
 * the write checks those rows are unchanged. Every row change here is made straight in the database, as another
 * API process, the CLI or the worker would make it, never through this process's API: the cache cannot have heard
 * of it, and the next create must still see it.
 */
describe('Posts: creates from the last read of their accounts and limits (issue 15)', function () {
  this.timeout(120_000);
  let h: PostsHarness;
  const reads = new CreationReads();

  before(async () => {
    h = await startPostsHarness({ posts: { creationReads: reads } });
  });
  after(async () => h?.stop());

  async function userWithAccount(plan: 'free' | 'starter') {
    const user = await h.api.newUser(plan);
    return { ...user, account: await insertXAccount(h.db, user.userId, h.standIns.x) };
  }

  const postsOf = async (userId: string) => (await h.db.selectFrom('posts').select('text').where('user_id', '=', userId).execute()).map((row) => row.text);
  const writtenFor = async (userId: string) => ({
    posts: await postsOf(userId),
    reservations: (await h.db.selectFrom('quota_reservations').select('post_id').where('user_id', '=', userId).execute()).length,
    usage: await h.db.selectFrom('usage_months').select(['posts', 'scheduled', 'overage']).where('user_id', '=', userId).executeTakeFirst(),
  });

  it('a plan lowered elsewhere: the next create is held to the new plan, nothing written by the attempt from the old read', async () => {
    const user = await userWithAccount('starter');
    const warm = await h.api.request('POST', '/api/v1/posts', { key: user.apiKey, body: { account_id: user.account.id, text: 'read the starter plan', draft: true } });
    assert.equal(warm.status, 201, warm.text);
    await h.db.insertInto('usage_months').values({ user_id: user.userId, month: usageMonth(h.now()), posts: 30 }).execute();
    await setPlan(h.db, user.userId, 'free');
    const before = await writtenFor(user.userId);

    const res = await h.api.request('POST', '/api/v1/posts', { key: user.apiKey, body: { account_id: user.account.id, text: 'over the free plan' } });

    // Starter counts a 31st post as overage; Free refuses it.
    assert.equal(res.status, 429, res.text);
    assert.match(res.body.error.message, /^Monthly post quota reached: 30 of 30 posts used this month on the Free plan/);
    assert.deepEqual(await writtenFor(user.userId), before);
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === 'over the free plan').length, 0);
  });

  for (const draft of [false, true]) {
    it(`an account that lost its connection elsewhere: the next ${draft ? 'draft' : 'post'} is 404 and writes nothing`, async () => {
      const user = await userWithAccount('starter');
      const warm = await h.api.request('POST', '/api/v1/posts', { key: user.apiKey, body: { account_id: user.account.id, text: 'read the account', draft: true } });
      assert.equal(warm.status, 201, warm.text);
      await h.db.updateTable('accounts').set({ active: false, inactive_reason: 'connection_lost' }).where('id', '=', user.account.id).execute();
      const before = await writtenFor(user.userId);

      const res = await h.api.request('POST', '/api/v1/posts', { key: user.apiKey, body: { account_id: user.account.id, text: 'to a gone account', draft } });

      assert.equal(res.status, 404, res.text);
      assert.equal(res.body.error.code, 'not_found');
      assert.equal(res.body.error.message, `Account ${user.account.id} is not active`);
      assert.deepEqual(await writtenFor(user.userId), before);
    });
  }

  it('a thread, from the last read: held to a plan lowered elsewhere, 404 for an account that lost its connection, nothing written', async () => {
    const user = await userWithAccount('starter');
    const warm = await h.api.request('POST', '/api/v1/threads', { key: user.apiKey, body: { account_id: user.account.id, posts: [{ text: 'w1' }, { text: 'w2' }], draft: true } });
    assert.equal(warm.status, 201, warm.text);
    await h.db.insertInto('usage_months').values({ user_id: user.userId, month: usageMonth(h.now()), posts: 29 }).execute();
    await setPlan(h.db, user.userId, 'free');
    const before = await writtenFor(user.userId);

    const overQuota = await h.api.request('POST', '/api/v1/threads', { key: user.apiKey, body: { account_id: user.account.id, posts: [{ text: 't1' }, { text: 't2' }] } });
    assert.equal(overQuota.status, 429, overQuota.text);
    assert.match(overQuota.body.error.message, /^Monthly post quota reached: 29 of 30 posts used this month on the Free plan; this request needs 2/);
    assert.deepEqual(await writtenFor(user.userId), before);

    await setPlan(h.db, user.userId, 'starter');
    const read = await h.api.request('POST', '/api/v1/threads', { key: user.apiKey, body: { account_id: user.account.id, posts: [{ text: 'r1' }], draft: true } });
    assert.equal(read.status, 201, read.text);
    await h.db.updateTable('accounts').set({ active: false, inactive_reason: 'connection_lost' }).where('id', '=', user.account.id).execute();
    const afterRead = await writtenFor(user.userId);
    const gone = await h.api.request('POST', '/api/v1/threads', { key: user.apiKey, body: { account_id: user.account.id, posts: [{ text: 'g1' }, { text: 'g2' }] } });
    assert.equal(gone.status, 404, gone.text);
    assert.deepEqual(await writtenFor(user.userId), afterRead);
  });

  it('an account reconnected elsewhere: a refusal is never answered from the cached row', async () => {
    const user = await userWithAccount('starter');
    await h.db.updateTable('accounts').set({ active: false, inactive_reason: 'connection_lost' }).where('id', '=', user.account.id).execute();
    const refused = await h.api.request('POST', '/api/v1/posts', { key: user.apiKey, body: { account_id: user.account.id, text: 'not yet', draft: true } });
    assert.equal(refused.status, 404, refused.text);
    await h.db.updateTable('accounts').set({ active: true, inactive_reason: null }).where('id', '=', user.account.id).execute();

    const res = await h.api.request('POST', '/api/v1/posts', { key: user.apiKey, body: { account_id: user.account.id, text: 'back again' } });

    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.data.status, 'published');
    assert.deepEqual(await postsOf(user.userId), ['back again']);
  });

  it('keeps what a create decides with, never the credentials', async () => {
    const user = await userWithAccount('starter');
    const res = await h.api.request('POST', '/api/v1/posts', { key: user.apiKey, body: { account_id: user.account.id, text: 'read and kept', draft: true } });
    assert.equal(res.status, 201, res.text);

    const kept = reads.get(user.userId, [user.account.id])?.accounts[0]?.row;
    assert.deepEqual(kept && Object.keys(kept).sort(), ['active', 'id', 'kind', 'own_credentials', 'platform', 'premium', 'timezone', 'via']);
  });

  it('an account changed elsewhere in a way that does not refuse (its credential renewed): the create goes through once', async () => {
    const user = await userWithAccount('starter');
    const warm = await h.api.request('POST', '/api/v1/posts', { key: user.apiKey, body: { account_id: user.account.id, text: 'warm', draft: true } });
    assert.equal(warm.status, 201, warm.text);
    await h.db.updateTable('accounts').set({ credential_issued_at: new Date() }).where('id', '=', user.account.id).execute();

    const res = await h.api.request('POST', '/api/v1/posts', { key: user.apiKey, body: { account_id: user.account.id, text: 'after the renewal' } });

    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.data.status, 'published');
    assert.deepEqual((await postsOf(user.userId)).sort(), ['after the renewal', 'warm']);
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === 'after the renewal').length, 1);
    assert.equal((await h.db.selectFrom('usage_months').select('posts').where('user_id', '=', user.userId).executeTakeFirstOrThrow()).posts, 1);
  });
});

describe('CreationReads: what it keeps and for how long', () => {
  const account = (id: string) => ({ row: { id } as AccountRow, version: '1' });
  const read = (userId: string, ids: string[]) => ({ userId, limits: {} as never, userVersion: '7', accounts: ids.map(account) });

  it('answers only when every account named was read, whatever the case of the ids', () => {
    const reads = new CreationReads();
    reads.remember(read('u1', ['a', 'b']));
    reads.remember(read('u1', ['c']));
    assert.deepEqual(reads.get('u1', ['C', 'a'])?.accounts.map((a) => a.row.id), ['c', 'a']);
    assert.equal(reads.get('u1', ['a', 'd']), undefined);
    assert.equal(reads.get('u2', ['a']), undefined);
    reads.forget('u1');
    assert.equal(reads.get('u1', ['a']), undefined);
  });

  it('forgets a user after ttlMs, and the least recently read beyond maxUsers', () => {
    let now = 0;
    const reads = new CreationReads({ ttlMs: 1_000, maxUsers: 2, clock: () => now });
    reads.remember(read('u1', ['a']));
    reads.remember(read('u2', ['a']));
    reads.remember(read('u1', ['b']));
    reads.remember(read('u3', ['a']));
    assert.equal(reads.get('u2', ['a']), undefined, 'u2 was read least recently');
    assert.ok(reads.get('u1', ['a', 'b']));
    now = 1_001;
    assert.equal(reads.get('u1', ['a']), undefined);
  });
});
