import { type Kysely, sql } from 'kysely';

/**
 * Index paths for the two listings of `GET /api/v1/posts` (api/routes/posts-list.ts), in the listing's own order
 * (`created_at desc, thread_id, thread_order, id desc`) so a page is read straight off the index, with no sort:
 * - the default listing (no status, no group) leaves out drafts, hidden and promoted posts. Its partial index holds
 *   only the rows it can show, so 20,000 newer drafts are never visited on the way to the first 100 posts;
 * - `status=...` (`status=draft` above all) walks the rows of one user and one status, newest first.
 * The queries pass their values as parameters; node-postgres sends unnamed statements, which PostgreSQL plans with
 * the values at hand, so the partial index's predicate is matched against them.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create index posts_user_listing_idx on posts (user_id, created_at desc, thread_id, thread_order, id desc)
    where status <> 'draft' and hidden = false and promoted_to_id is null`.execute(db);
  await sql`
    create index posts_user_status_listing_idx on posts (user_id, status, created_at desc, thread_id, thread_order, id desc)
    where promoted_to_id is null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index posts_user_status_listing_idx`.execute(db);
  await sql`drop index posts_user_listing_idx`.execute(db);
}
