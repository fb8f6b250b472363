import assert from 'node:assert/strict';
import { Kysely, PostgresDialect } from 'kysely';
import type { Database } from '../../src/db';
import { postsNeedingWorkflows, postsNeedingWorkflowsInDetail } from '../../src/posts/reconcile-queries';
import { createUser } from '../../src/users/users';
import { createTestDatabase, type TestDatabase } from '../helpers/db';
import { seedPublishedThenDrafts } from '../helpers/listing-seed';
import { insertAccount } from './fixtures';

/**
 * `posts_status_idx` holds only `scheduled` and `publishing` posts (migration 0297, issue 15: an immediate post's
 * recording and every draft wrote entries nothing read), and every query that read it still does, on a table of
 * 20,000 drafts and 2,000 published posts beside the few that wait.
 */
describe('posts: the status index holds the posts that wait or are in flight', function () {
  this.timeout(120_000);
  let database: TestDatabase;
  /** The reconciler's statements, as sent (captured through Kysely's log hook). */
  const sent: Array<{ sql: string; parameters: readonly unknown[] }> = [];
  let db: Kysely<Database>;
  const waiting = { scheduled: 300, publishing: 20 };

  before(async () => {
    database = await createTestDatabase();
    db = new Kysely<Database>({
      dialect: new PostgresDialect({ pool: database.pool }),
      log: (event) => {
        if (event.level === 'query') sent.push({ sql: event.query.sql, parameters: event.query.parameters });
      },
    });
    const user = await createUser(database.db, { plan: 'pro' });
    const account = await insertAccount(database.db, user.id, { platform: 'x', platform_account_id: 'x-1', username: 'x1', credentials: { access_token: 't' } });
    await seedPublishedThenDrafts(database.pool, user.id, { published: 2_000, drafts: 20_000 });
    await database.pool.query(
      `insert into posts (user_id, account_id, platform, text, status, scheduled_at)
       select $1, $2, 'x', 'scheduled ' || i, 'scheduled', now() + i * interval '10 minutes' from generate_series(1, $3::int) i`,
      [user.id, account.id, waiting.scheduled],
    );
    await database.pool.query(
      `insert into posts (user_id, account_id, platform, text, status) select $1, $2, 'x', 'publishing ' || i, 'publishing' from generate_series(1, $3::int) i`,
      [user.id, account.id, waiting.publishing],
    );
    await database.pool.query('vacuum analyze posts');
  });

  it('has an entry for each scheduled or publishing post and none for drafts or published posts', async () => {
    // VACUUM counts an index's entries exactly into reltuples.
    const { rows } = await database.pool.query<{ entries: number }>(`select reltuples::int as entries from pg_class where relname = 'posts_status_idx'`);
    assert.equal(rows[0]!.entries, waiting.scheduled + waiting.publishing);
  });

  /** The plan of a captured statement (a cursor's query without its `declare`), with the values it was sent with. */
  async function planOf(statement: { sql: string; parameters: readonly unknown[] }): Promise<string> {
    const query = statement.sql.replace(/^declare \S+ no scroll cursor for /, '');
    const { rows } = await database.pool.query<{ 'QUERY PLAN': unknown }>(`explain (format json) ${query}`, [...statement.parameters]);
    return JSON.stringify(rows[0]!['QUERY PLAN']);
  }

  for (const [name, read] of [
    ['every post needing a workflow (start-up, herald posts stuck)', (kysely: Kysely<Database>) => postsNeedingWorkflowsInDetail(kysely)],
    ['the periodic look (changed, overdue, long publishing, due soon)', (kysely: Kysely<Database>) => postsNeedingWorkflows(kysely, { changedWithinMs: 120_000, dueBeforeMs: Date.now() + 240_000 })],
  ] as const) {
    it(`reads it for ${name}`, async () => {
      sent.length = 0;
      const rows = await read(db);
      if (name.startsWith('every')) assert.equal(rows.length, waiting.scheduled + waiting.publishing);
      const declared = sent.find((s) => s.sql.startsWith('declare'));
      assert.ok(declared, 'the reconciler reads through a cursor');
      const plan = await planOf(declared);
      assert.match(plan, /posts_status_idx/, plan);
      assert.doesNotMatch(plan, /Seq Scan/, plan);
    });
  }
});
