import { randomUUID } from 'node:crypto';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db';
import { namedStatements, rowsOf } from '../../src/db/named-statements';
import { beginPublishAttempt } from '../../src/posts/attempt-marks';
import { listPostViews, loadPostViews } from '../../src/posts/view-queries';
import { recordPublishedAll } from '../../src/posts/attempt-outcomes';
import { createUser } from '../../src/users/users';
import { createTestDatabase, type TestDatabase, testDatabase } from '../helpers/db';
import { seedPublishedThenDrafts } from '../helpers/listing-seed';

/** Statements built per call with one text (src/db/named-statements.ts), and the one-post statements of a publish. */
describe('named statements', function () {
  this.timeout(60_000);
  let database: TestDatabase;
  before(async () => {
    database = await testDatabase();
  });

  const statements = namedStatements(2);
  const rowsQuery = (ids: string[], labels: Array<string | null>) =>
    sql<{ id: string; label: string | null }>`select id::text, label from ${rowsOf('r', { id: { values: ids, type: 'uuid' }, label: { values: labels, type: 'text' } })} order by id`;

  it('gives the same rows as one `values` row or as arrays, nulls and types kept', async () => {
    const [a, b] = ['00000000-0000-4000-8000-00000000000a', '00000000-0000-4000-8000-00000000000b'];
    assert.deepEqual(await statements.execute(database.db, rowsQuery([a], [null])), [{ id: a, label: null }]);
    assert.deepEqual(await statements.execute(database.db, rowsQuery([b, a], ["it's", null])), [
      { id: a, label: null },
      { id: b, label: "it's" },
    ]);
  });

  it('prepares each text once on a connection, and sends it unnamed in a transaction', async () => {
    const single = openDatabase(database.url, { max: 1, applicationName: 'herald-test-named' });
    try {
      for (let i = 0; i < 3; i++) await statements.execute(single.db, rowsQuery([`00000000-0000-4000-8000-00000000000${i}`], ['one']));
      for (let i = 0; i < 3; i++) await statements.execute(single.db, rowsQuery(['00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002'], ['x', 'y']));
      await single.db.transaction().execute((trx) => statements.execute(trx, rowsQuery(['00000000-0000-4000-8000-000000000003'], ['in a transaction'])));
      // A third text, past the two this set names: answered all the same, unnamed.
      assert.deepEqual(await statements.execute(single.db, sql<{ n: number }>`select 1 as n`), [{ n: 1 }]);
      const { rows } = await single.pool.query<{ statement: string }>(`select statement from pg_prepared_statements where name like 'herald-precompiled-%' order by prepare_time`);
      assert.equal(rows.length, 2);
      assert.match(rows[0]!.statement, /from \(values \(\$1::uuid, \$2::text\)\) as r\(id, label\)/);
      assert.match(rows[1]!.statement, /from unnest\(\$1::uuid\[\], \$2::text\[\]\) as r\(id, label\)/);
    } finally {
      await single.close();
    }
  });

  it("keeps a generic plan for a post's mark, its recording and the answer's read (no planning per publish)", async () => {
    // A database of its own: the 5,000 rows and the statistics below are no other test's business.
    const own = await createTestDatabase();
    const user = await createUser(own.db, { plan: 'pro' });
    const single = openDatabase(own.url, { max: 1, applicationName: 'herald-test-named' });
    try {
      // PostgreSQL plans a named statement's first five runs for their values, then keeps the generic plan if it
      // costs no more: seven publishes leave every statement of the path on it, or one of them planned each time.
      // With statistics, as a live table has them: without, PostgreSQL's estimates of one id or an array are alike.
      await own.db
        .insertInto('posts')
        .values(Array.from({ length: 5000 }, (_, i) => ({ user_id: user.id, platform: 'x', text: `old ${i}`, status: 'published' as const })))
        .execute();
      await sql`analyze posts`.execute(own.db);
      for (let i = 0; i < 7; i++) {
        const { id } = await own.db
          .insertInto('posts')
          .values({ user_id: user.id, platform: 'x', text: `post ${i}`, status: 'publishing' })
          .returning('id')
          .executeTakeFirstOrThrow();
        const marked = await beginPublishAttempt(single.db, id);
        assert.ok(marked);
        await recordPublishedAll(single.db, [{ postId: id, platformPostId: `p${i}`, url: null, publishedAt: Date.now(), marked }]);
        const [view] = await loadPostViews(single.db, [id]);
        assert.equal(view?.status, 'published');
      }
      const { rows } = await single.pool.query<{ statement: string; generic_plans: string; custom_plans: string }>(
        `select statement, generic_plans::text, custom_plans::text from pg_prepared_statements where name like 'herald-precompiled-%'`,
      );
      assert.equal(rows.length, 3, 'the mark, the recording, the read');
      for (const row of rows) assert.ok(keptGeneric(row), `${row.statement.slice(0, 80)}: ${row.generic_plans} generic, ${row.custom_plans} custom`);
      const events = await own.db.selectFrom('events').select('type').where('user_id', '=', user.id).execute();
      assert.deepEqual(events.map((e) => e.type), Array(7).fill('post.published'));
    } finally {
      await single.close();
    }
  });

  it('keeps one plan per post listing, read off its index in order, whoever lists (no planning per listing)', async () => {
    // Statistics as live tables have them, in two shapes: one user holding every post (200 published, 6,000 newer
    // drafts, as bench:reads' account), then 60 more users with few. A custom plan estimates a parameter from its
    // value (the heavy user, a status, the page): with them seen, PostgreSQL planned the status listing every call
    // in the first shape (0 generic plans) and the default listing in the second; with only the page seen, the
    // status listing still.
    const own = await createTestDatabase();
    const heavy = await createUser(own.db, { plan: 'pro' });
    const groupId = randomUUID();
    await own.db.insertInto('posts').values(['a', 'b', 'c'].map((text) => ({ user_id: heavy.id, platform: 'x' as const, text, status: 'published' as const, group_id: groupId }))).execute();
    await seedPublishedThenDrafts(own.pool, heavy.id, { published: 200, drafts: 6000 });
    await assertListingsKeepTheirPlans(own.url, heavy.id, groupId);
    for (let i = 0; i < 60; i++) {
      const light = await createUser(own.db, { plan: 'pro' });
      await seedPublishedThenDrafts(own.pool, light.id, { published: [5, 50, 300][i % 3]!, drafts: [1, 20, 100][i % 3]! });
    }
    await assertListingsKeepTheirPlans(own.url, heavy.id, groupId);
  });
});

/**
 * PostgreSQL plans a named statement's first five runs for their values, then keeps the generic plan if it costs no
 * more: past five custom plans, it is planning the statement on every call.
 */
function keptGeneric(row: { generic_plans: string; custom_plans: string }): boolean {
  return Number(row.generic_plans) >= 2 && Number(row.custom_plans) <= 5;
}

/** Seven of each listing on one connection: each kept on a generic plan, the two long ones read off their index. */
async function assertListingsKeepTheirPlans(url: string, userId: string, groupId: string): Promise<void> {
  const single = openDatabase(url, { max: 1, applicationName: 'herald-test-named' });
  try {
    for (let i = 0; i < 7; i++) {
      assert.equal((await listPostViews(single.db, userId, { limit: 100 })).length, 100);
      assert.equal((await listPostViews(single.db, userId, { status: 'draft', limit: 100, offset: 100 })).length, 100);
      assert.equal((await listPostViews(single.db, userId, { group_id: groupId, include_hidden: true })).length, 3);
    }
    const { rows: statements } = await single.pool.query<{ name: string; statement: string; generic_plans: string; custom_plans: string; parameters: number }>(
      `select name, statement, generic_plans::text, custom_plans::text, cardinality(parameter_types) as parameters
       from pg_prepared_statements where name like 'herald-precompiled-%' order by prepare_time`,
    );
    assert.equal(statements.length, 3, 'the default listing, by status, by group');
    const planned = statements.filter((row) => !keptGeneric(row));
    assert.deepEqual(planned.map((row) => `${row.statement.slice(-220)}: ${row.generic_plans} generic, ${row.custom_plans} custom`), []);
    // The generic plan itself (any values will do): a sort here would sort every post of a heavy user for one page.
    await single.pool.query('set plan_cache_mode = force_generic_plan');
    const plans = [];
    for (const { name, parameters } of statements.slice(0, 2)) {
      const { rows } = await single.pool.query<{ 'QUERY PLAN': string }>(`explain (costs off) execute "${name}"(${Array(parameters).fill('null').join(', ')})`);
      plans.push(rows.map((row) => row['QUERY PLAN']).join('\n'));
    }
    assert.match(plans[0]!, /Index Scan Backward using posts_user_listing_idx/);
    assert.match(plans[1]!, /Index Scan Backward using posts_user_status_listing_idx/);
    for (const plan of plans) assert.doesNotMatch(plan, /Sort/);
  } finally {
    await single.close();
  }
}
