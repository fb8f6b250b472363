import { sql, type Kysely } from 'kysely';

/**
 * `posts_status_idx (status, scheduled_at)` holds only the posts whose status needs a workflow, `scheduled` and
 * `publishing` (issue 15, index entries per publish). Every query that reads it asks for one or both of those (the
 * reconciler's look and `herald posts stuck`, the cancellations and failures of scheduled or publishing posts); no
 * query reads a draft, a published, failed, cancelled or deleted post through it (a post's own row is found by its
 * key, a user's by the listing indexes, a published post with its first comment left by its own partial index, 0253).
 * Indexed whole, each immediate post wrote a second entry at its recording (`publishing` → `published`, never HOT) and
 * every draft one at its insert, entries nothing read; the index also grew with every post ever made, where now it
 * holds the posts still waiting or in flight. A query's `status = 'scheduled'` or `status in ('scheduled',
 * 'publishing')` implies the predicate, so PostgreSQL uses it for the same lookups
 * (`test/posts/status-index.test.ts` checks the plans on 20,000 drafts).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`drop index posts_status_idx`.execute(db);
  await sql`create index posts_status_idx on posts (status, scheduled_at) where status in ('scheduled', 'publishing')`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index posts_status_idx`.execute(db);
  await sql`create index posts_status_idx on posts (status, scheduled_at)`.execute(db);
}
