import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { ApiError } from '../../src/errors';
import { beginPublishAttempts } from '../../src/posts/attempt-marks';
import { insertPosts } from '../../src/posts/repository';
import { recordPublishedAll } from '../../src/posts/attempt-outcomes';
import { loadLimits, reserveQuota, usageFor, usageMonth, type Charge } from '../../src/quota/quota';
import { searchAttributesOf, workflowSearchAttributes } from '../../src/temporal/search-attributes';
import { createUser } from '../../src/users/users';
import { testDatabase, type TestDatabase } from '../helpers/db';

/**
 * The publish path's writes in fewer statements (issue 15): the quota of a create in one statement (counters,
 * overage and reservations), and an immediate fan-out's published rows recorded in one transaction.
 */
describe('Publish writes: quota in one statement, a group recorded together', function () {
  this.timeout(60_000);
  let database: TestDatabase;
  const now = new Date();

  before(async () => {
    database = await testDatabase();
  });

  async function reserve(userId: string, charges: Charge[]): Promise<void> {
    const limits = await loadLimits(database.db, userId);
    await database.db.transaction().execute((trx) => reserveQuota(trx, { userId, limits, now, charges }));
  }

  const reservations = (postIds: string[]) =>
    database.db.selectFrom('quota_reservations').select(['post_id', 'kind', 'overage', 'state']).where('post_id', 'in', postIds).orderBy('created_at').execute();

  it('a request crossing the paid post quota marks only the charges past it as overage, and counts every kind', async () => {
    const user = await createUser(database.db, { plan: 'agent' }); // 300 posts a month, overage after
    await database.db.insertInto('usage_months').values({ user_id: user.id, month: usageMonth(now), posts: 298, scheduled: 4 }).execute();
    const [a, b] = [randomUUID(), randomUUID()];
    await reserve(user.id, [
      { postId: a, kind: 'post' },
      { postId: a, kind: 'scheduled' },
      { postId: a, kind: 'first_comment' },
      { postId: b, kind: 'post' },
      { postId: b, kind: 'x_link' },
    ]);
    const usage = await usageFor(database.db, user.id, now);
    assert.deepEqual({ posts: usage.posts, scheduled: usage.scheduled, overage: usage.overage, x_link_posts: usage.x_link_posts }, { posts: 301, scheduled: 5, overage: 1, x_link_posts: 1 });
    const rows = await reservations([a, b]);
    const overage = rows.filter((r) => r.overage).map((r) => `${r.post_id === a ? 'a' : 'b'}:${r.kind}`);
    assert.deepEqual(overage, ['b:post'], 'the third post charge (298 + 2 = 300) is the first past the quota');
    assert.equal(rows.length, 5);
    assert.ok(rows.every((r) => r.state === 'reserved'));
  });

  it("a user's first request of the month creates the counters, overage included", async () => {
    const user = await createUser(database.db, { plan: 'enterprise' }); // no post quota of its own: every post is overage
    const postId = randomUUID();
    await reserve(user.id, [{ postId, kind: 'post' }]);
    const usage = await usageFor(database.db, user.id, now);
    assert.deepEqual({ posts: usage.posts, overage: usage.overage }, { posts: 1, overage: 1 });
    assert.deepEqual((await reservations([postId])).map((r) => r.overage), [true]);
  });

  it('a refusal over a hard limit takes nothing: the transaction rolls the counters and reservations back', async () => {
    const user = await createUser(database.db, { plan: 'free' });
    await database.db.insertInto('usage_months').values({ user_id: user.id, month: usageMonth(now), posts: 29 }).execute();
    const postId = randomUUID();
    await assert.rejects(
      reserve(user.id, [
        { postId, kind: 'post' },
        { postId, kind: 'first_comment' },
      ]),
      (err: unknown) => err instanceof ApiError && err.code === 'usage_limit_exceeded' && /29 of 30 posts used .* needs 2 .* 1 is left/.test(err.message),
    );
    assert.equal((await usageFor(database.db, user.id, now)).posts, 29);
    assert.equal((await reservations([postId])).length, 0);
  });

  it('records many published posts in one go: only rows still publishing change and spend their reservations', async () => {
    const user = await createUser(database.db, { plan: 'enterprise' });
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    await database.db.transaction().execute(async (trx) => {
      await insertPosts(trx, ids.map((id, i) => ({ id, user_id: user.id, platform: 'x' as const, text: `group ${i}`, status: i === 2 ? ('failed' as const) : ('publishing' as const) })));
      await reserveQuota(trx, { userId: user.id, limits: await loadLimits(trx, user.id), now, charges: ids.map((postId) => ({ postId, kind: 'post' as const })) });
    });
    const at = Date.parse('2026-01-02T03:04:05.678Z');
    const outcomes = ids.map((postId, i) => ({ postId, platformPostId: `tweet-${i}`, url: i === 0 ? null : `https://x.com/i/${i}`, publishedAt: at + i }));
    await recordPublishedAll(database.db, outcomes);
    await recordPublishedAll(database.db, outcomes); // repeated: changes nothing

    const rows = await database.db.selectFrom('posts').select(['id', 'status', 'platform_post_id', 'platform_post_url', 'published_at']).where('id', 'in', ids).execute();
    const byId = new Map(rows.map((r) => [r.id, r]));
    assert.deepEqual(
      ids.map((id) => byId.get(id)!).map((r) => [r.status, r.platform_post_id, r.platform_post_url, r.published_at?.toISOString() ?? null]),
      [
        ['published', 'tweet-0', null, '2026-01-02T03:04:05.678Z'],
        ['published', 'tweet-1', 'https://x.com/i/1', '2026-01-02T03:04:05.679Z'],
        ['failed', null, null, null],
      ],
    );
    const states = new Map((await reservations(ids)).map((r) => [r.post_id, r.state]));
    assert.deepEqual(ids.map((id) => states.get(id)), ['spent', 'spent', 'reserved']);
  });

  it("a workflow's search attributes from the rows the API just wrote are those read back from the table", async () => {
    const user = await createUser(database.db, { plan: 'enterprise' });
    const groupId = randomUUID();
    const rows = [randomUUID(), randomUUID(), randomUUID()].map((id, i) => ({
      id,
      user_id: user.id,
      platform: i === 1 ? ('bluesky' as const) : ('x' as const),
      text: `attributes ${i}`,
      status: 'draft' as const,
      group_id: groupId,
    }));
    await database.db.transaction().execute((trx) => insertPosts(trx, rows));
    const fromRows = searchAttributesOf(rows);
    assert.deepEqual(fromRows, await workflowSearchAttributes(database.db, { postIds: rows.map((r) => r.id) }));
    assert.equal(fromRows.find((p) => p.key.name === 'GroupId')?.value, groupId);
    assert.deepEqual(fromRows.find((p) => p.key.name === 'PostId')?.value, rows.map((r) => r.id).sort());
  });

  it("marks a group's platform calls begun in one statement: only publishing rows, each saying whether an earlier call was left open", async () => {
    const user = await createUser(database.db, { plan: 'enterprise' });
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    await database.db.transaction().execute((trx) =>
      insertPosts(trx, ids.map((id, i) => ({ id, user_id: user.id, platform: 'x' as const, text: `begin ${i}`, status: i === 2 ? ('published' as const) : ('publishing' as const) }))),
    );
    const first = await beginPublishAttempts(database.db, [ids[0]!]);
    assert.deepEqual(first.map((r) => [r.id, r.earlier_attempt_open]), [[ids[0], false]]);
    const group = await beginPublishAttempts(database.db, ids);
    assert.deepEqual(
      new Map(group.map((r) => [r.id, r.earlier_attempt_open])),
      new Map([
        [ids[0], true],
        [ids[1], false],
      ]),
    );
  });
});
