import assert from 'node:assert/strict';
import type { DatabaseHandle } from '../../src/db';
import { createLogger } from '../../src/logger';
import { updatePost } from '../../src/posts/update';
import { createPostsRuntime, type PostsRuntime } from '../../src/posts/runtime';
import { usageFor, usageMonth } from '../../src/quota/quota';
import { createThreads } from '../../src/threads/create';
import { testConfig } from '../helpers/api';
import { testDatabase } from '../helpers/db';
import { countingDatabase } from '../helpers/counting-database';
import { insertXAccount, testSealedBox } from '../posts/fixtures';
import { startPostsHarness, type PostsHarness } from '../posts/harness';

/**
 * README "Publish path cost": the user's month row is where all of one user's publishes queue, so a thread create
 * takes its parts and the quota in one statement, as a post create does, and a draft promotion (a post's or a
 * thread's) takes the quota as the last statement of its transaction; a request the quota refuses is rolled back
 * whole (no row, no reservation, the drafts as they were).
 */
describe('Threads and draft promotions: the quota taken last, nothing kept when it refuses', function () {
  this.timeout(120_000);
  let h: PostsHarness;
  let counted: DatabaseHandle | undefined;
  let rt: PostsRuntime;
  const statements: string[] = [];

  before(async function () {
    h = await startPostsHarness();
    counted = countingDatabase((await testDatabase()).url, statements);
    rt = createPostsRuntime({ config: testConfig(), db: counted.db, logger: createLogger('silent') }, { adapters: h.standIns.adapters, sealedBox: testSealedBox });
  });
  after(async () => {
    await counted?.close();
    await h?.stop();
  });

  /** A Free user with `used` of its 30 posts used this month, and an x account. */
  const freeUserAt = async (used: number) => {
    const user = await h.api.newUser('free');
    const account = await insertXAccount(h.db, user.userId, h.standIns.x);
    await h.db.insertInto('usage_months').values({ user_id: user.userId, month: usageMonth(h.now()), posts: used }).execute();
    return { ...user, account };
  };
  const postsOf = (userId: string) => h.db.selectFrom('posts').select(['id', 'status', 'promoted_to_id']).where('user_id', '=', userId).orderBy('created_at').execute();
  const reservationsOf = (userId: string) => h.db.selectFrom('quota_reservations').select('post_id').where('user_id', '=', userId).execute();

  /** Runs `refusedCall` on the counting pool: it must throw the envelope's error, its transaction's last statement the quota's. */
  const assertQuotaLastThenRolledBack = async (refusedCall: () => Promise<unknown>, envelope: { code: string; message: string }, writesBefore: RegExp[]) => {
    statements.length = 0;
    await assert.rejects(refusedCall(), (err: Error & { code?: string }) => err.code === envelope.code && err.message === envelope.message);
    const begin = statements.lastIndexOf('begin');
    const rollback = statements.indexOf('rollback', begin);
    assert.ok(begin >= 0 && rollback > begin, statements.join('\n'));
    const body = statements.slice(begin + 1, rollback);
    assert.match(body[body.length - 1]!, /insert into usage_months/, `the quota is the transaction's last statement:\n${body.join('\n')}`);
    assert.equal(body.filter((s) => /usage_months/.test(s)).length, 1, body.join('\n'));
    for (const write of writesBefore) assert.ok(body.slice(0, -1).some((s) => write.test(s)), `${write} runs before the quota:\n${body.join('\n')}`);
  };

  it('a thread create over the Free quota: 429, its parts and the quota one statement (as a post create), nothing kept', async () => {
    const user = await freeUserAt(29);
    const body = { account_id: user.account.id, posts: [{ text: 'last one' }, { text: 'last two' }] };
    const res = await h.api.request('POST', '/api/v1/threads', { key: user.apiKey, body });
    assert.equal(res.status, 429, res.text);
    assert.equal(res.body.error.code, 'usage_limit_exceeded');
    assert.deepEqual(await postsOf(user.userId), []);
    assert.deepEqual(await reservationsOf(user.userId), []);
    assert.equal((await usageFor(h.db, user.userId, h.now())).posts, 29);

    statements.length = 0;
    await assert.rejects(createThreads(rt, user.userId, body), (err: Error & { code?: string }) => err.code === res.body.error.code && err.message === res.body.error.message);
    const writes = statements.filter((s) => /insert into/.test(s));
    assert.equal(writes.length, 1, statements.join('\n'));
    assert.match(writes[0]!, /insert into "posts"/);
    assert.match(writes[0]!, /insert into usage_months/);
    assert.ok(!statements.includes('begin'), statements.join('\n'));
    assert.deepEqual(await postsOf(user.userId), []);
    assert.deepEqual(await reservationsOf(user.userId), []);
    assert.equal((await usageFor(h.db, user.userId, h.now())).posts, 29);
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === 'last one').length, 0);
  });

  it('a draft post promoted over the Free quota: 429, the new post and the promotion mark rolled back, the draft as it was', async () => {
    const user = await freeUserAt(30);
    const draft = await h.api.request('POST', '/api/v1/posts', { key: user.apiKey, body: { account_id: user.account.id, text: 'promoted too late', draft: true } });
    assert.equal(draft.status, 201, draft.text);
    const res = await h.api.request('PATCH', `/api/v1/posts/${draft.body.data.id}`, { key: user.apiKey, body: { publish: true } });
    assert.equal(res.status, 429, res.text);
    assert.equal(res.body.error.code, 'usage_limit_exceeded');
    const unchanged = [{ id: draft.body.data.id, status: 'draft', promoted_to_id: null }];
    assert.deepEqual(await postsOf(user.userId), unchanged);
    assert.deepEqual(await reservationsOf(user.userId), []);

    await assertQuotaLastThenRolledBack(() => updatePost(rt, user.userId, draft.body.data.id, { publish: true }), res.body.error, [/insert into "posts"/, /update "posts" set "promoted_to_id"/]);
    assert.deepEqual(await postsOf(user.userId), unchanged);
    assert.deepEqual(await reservationsOf(user.userId), []);
    assert.equal((await usageFor(h.db, user.userId, h.now())).posts, 30);
  });

  it('a draft thread promoted over the Free quota: 429, no new part kept, every draft part as it was', async () => {
    const user = await freeUserAt(29);
    const draft = await h.api.request('POST', '/api/v1/threads', { key: user.apiKey, body: { account_id: user.account.id, posts: [{ text: 'draft one' }, { text: 'draft two' }], draft: true } });
    assert.equal(draft.status, 201, draft.text);
    const draftIds: string[] = draft.body.data.posts.map((p: { id: string }) => p.id);
    const res = await h.api.request('PATCH', `/api/v1/posts/${draftIds[0]}`, { key: user.apiKey, body: { publish: true } });
    assert.equal(res.status, 429, res.text);
    assert.equal(res.body.error.code, 'usage_limit_exceeded');
    const unchanged = draftIds.map((id) => ({ id, status: 'draft', promoted_to_id: null }));
    const sorted = async () => (await postsOf(user.userId)).sort((a, b) => draftIds.indexOf(a.id) - draftIds.indexOf(b.id));
    assert.deepEqual(await sorted(), unchanged);
    assert.deepEqual(await reservationsOf(user.userId), []);

    await assertQuotaLastThenRolledBack(() => updatePost(rt, user.userId, draftIds[0]!, { publish: true }), res.body.error, [/insert into "posts"/, /update "posts" set "promoted_to_id"/]);
    assert.deepEqual(await sorted(), unchanged);
    assert.deepEqual(await reservationsOf(user.userId), []);
    assert.equal((await usageFor(h.db, user.userId, h.now())).posts, 29);
  });
});
