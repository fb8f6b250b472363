import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { ApiError } from '../../src/errors';
import type { PlanName } from '../../src/plans';
import { insertPosts, postsInsertOf } from '../../src/posts/repository';
import { loadLimits, reserveQuota, reserveQuotaWith, usageFor, usageMonth, type Charge } from '../../src/quota/quota';
import { createUser } from '../../src/users/users';
import { testDatabase, type TestDatabase } from '../helpers/db';

/**
 * A request over a hard limit (`src/quota/quota.ts`): the reservation's statement alone decides (it fails with the
 * limit it went over and that limit's numbers), and one function words the 429. Both ways of reserving (inside the
 * create's transaction, `reserveQuota`; as one statement with the posts' insert, `reserveQuotaWith`) answer the same
 * sentence, word for word as before the rule had one home, and keep nothing: no post, no reservation, the counters
 * as they were.
 */
describe('Quota refusals: one rule, the same 429 whichever way the quota is reserved', function () {
  this.timeout(60_000);
  let database: TestDatabase;
  const now = new Date();
  const resets = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString().slice(0, 10);

  before(async () => {
    database = await testDatabase();
  });

  type Usage = { posts: number; scheduled: number };
  type Reserve = (userId: string, charges: Charge[], postIds: string[]) => Promise<void>;

  /** The create's transaction: the posts inserted first, the quota last. */
  const inTransaction: Reserve = async (userId, charges, postIds) => {
    const limits = await loadLimits(database.db, userId);
    await database.db.transaction().execute(async (trx) => {
      await insertPosts(trx, postRows(userId, postIds));
      await reserveQuota(trx, { userId, limits, now, charges });
    });
  };
  /** `POST /posts`: the posts' insert a part of the quota's one statement. */
  const inOneStatement: Reserve = async (userId, charges, postIds) => {
    const limits = await loadLimits(database.db, userId);
    await reserveQuotaWith(database.db, { userId, limits, now, charges }, postsInsertOf(database.db, postRows(userId, postIds)));
  };
  const paths = { 'in the transaction (reserveQuota)': inTransaction, 'in one statement (reserveQuotaWith)': inOneStatement };

  const postRows = (userId: string, ids: string[]) => ids.map((id) => ({ id, user_id: userId, platform: 'x' as const, text: 'over the limit?', status: 'publishing' as const }));

  async function userAt(plan: PlanName, used: Usage, custom: { post_quota?: number; scheduled_quota?: number } = {}) {
    const user = await createUser(database.db, { plan });
    if (Object.keys(custom).length) await database.db.updateTable('users').set(custom).where('id', '=', user.id).execute();
    await database.db.insertInto('usage_months').values({ user_id: user.id, month: usageMonth(now), ...used }).execute();
    return user.id;
  }

  const written = async (userId: string) => {
    const usage = await usageFor(database.db, userId, now);
    return {
      usage: { posts: usage.posts, scheduled: usage.scheduled, overage: usage.overage, x_link_posts: usage.x_link_posts },
      posts: (await database.db.selectFrom('posts').select('id').where('user_id', '=', userId).execute()).length,
      reservations: (await database.db.selectFrom('quota_reservations').select('post_id').where('user_id', '=', userId).execute()).length,
    };
  };

  const post = (postId: string): Charge => ({ postId, kind: 'post' });
  const scheduled = (postId: string): Charge => ({ postId, kind: 'scheduled' });
  const firstComment = (postId: string): Charge => ({ postId, kind: 'first_comment' });

  const refusals: Array<{ title: string; plan: PlanName; used: Usage; custom?: { post_quota?: number; scheduled_quota?: number }; charges: (a: string, b: string) => Charge[]; sentence: string }> = [
    {
      title: 'Free post quota: the 31st post',
      plan: 'free',
      used: { posts: 30, scheduled: 0 },
      charges: (a) => [post(a)],
      sentence: `Monthly post quota reached: 30 of 30 posts used this month on the Free plan; this request needs 1 (first comments count as posts) and 0 are left (resets ${resets}, UTC)`,
    },
    {
      title: 'Free post quota: a post and its first comment with one left',
      plan: 'free',
      used: { posts: 29, scheduled: 0 },
      charges: (a) => [post(a), firstComment(a)],
      sentence: `Monthly post quota reached: 29 of 30 posts used this month on the Free plan; this request needs 2 (first comments count as posts) and 1 is left (resets ${resets}, UTC)`,
    },
    {
      title: 'Free post quota already overshot (a plan changed mid-month): nothing is left, never a negative count',
      plan: 'free',
      used: { posts: 34, scheduled: 0 },
      charges: (a, b) => [post(a), post(b)],
      sentence: `Monthly post quota reached: 34 of 30 posts used this month on the Free plan; this request needs 2 (first comments count as posts) and 0 are left (resets ${resets}, UTC)`,
    },
    {
      title: 'scheduled-post quota on Free',
      plan: 'free',
      used: { posts: 3, scheduled: 30 },
      charges: (a) => [post(a), scheduled(a)],
      sentence: `Monthly scheduled-post quota reached: 30 of 30 scheduled posts used this month on the Free plan; this request needs 1 and 0 are left (resets ${resets}, UTC)`,
    },
    {
      title: 'scheduled-post quota on a paid plan with a custom number (hard on every plan)',
      plan: 'scale',
      used: { posts: 0, scheduled: 1 },
      custom: { post_quota: 100, scheduled_quota: 2 },
      charges: (a, b) => [post(a), scheduled(a), post(b), scheduled(b)],
      sentence: `Monthly scheduled-post quota reached: 1 of 2 scheduled posts used this month on the Scale plan; this request needs 2 and 1 is left (resets ${resets}, UTC)`,
    },
    {
      title: 'over both on Free: the scheduled-post quota is named',
      plan: 'free',
      used: { posts: 30, scheduled: 30 },
      charges: (a) => [post(a), scheduled(a)],
      sentence: `Monthly scheduled-post quota reached: 30 of 30 scheduled posts used this month on the Free plan; this request needs 1 and 0 are left (resets ${resets}, UTC)`,
    },
  ];

  for (const [pathName, reserve] of Object.entries(paths)) {
    for (const refusal of refusals) {
      it(`${refusal.title}, ${pathName}: 429 with the sentence, nothing written`, async () => {
        const userId = await userAt(refusal.plan, refusal.used, refusal.custom);
        const before = await written(userId);
        const [a, b] = [randomUUID(), randomUUID()];
        await assert.rejects(reserve(userId, refusal.charges(a, b), [a, b]), (err: unknown) => {
          assert.ok(err instanceof ApiError, String(err));
          assert.equal(err.code, 'usage_limit_exceeded');
          assert.equal(err.status, 429);
          assert.equal(err.message, refusal.sentence);
          return true;
        });
        assert.deepEqual(await written(userId), { ...before, posts: 0, reservations: 0 });
      });
    }

    it(`requests that fit, ${pathName}: the last Free post, and a paid plan past its post quota (overage, not refused)`, async () => {
      const free = await userAt('free', { posts: 29, scheduled: 29 });
      const [a, b] = [randomUUID(), randomUUID()];
      await reserve(free, [post(a), scheduled(a)], [a]);
      assert.deepEqual(await written(free), { usage: { posts: 30, scheduled: 30, overage: 0, x_link_posts: 0 }, posts: 1, reservations: 2 });

      const agent = await userAt('agent', { posts: 300, scheduled: 0 });
      await reserve(agent, [post(b), firstComment(b)], [b]);
      assert.deepEqual(await written(agent), { usage: { posts: 302, scheduled: 0, overage: 2, x_link_posts: 0 }, posts: 1, reservations: 2 });
    });
  }
});
