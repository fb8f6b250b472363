import { type Kysely, sql } from 'kysely';

/**
 * Smaller indexes for what every post writes (issue 15, memory per waiting post; PostgreSQL's shared buffers read
 * with pg_buffercache after 10,000 posts were scheduled):
 * - The two listing indexes (migration 0085) were declared in the listing's own order, newest first, so every new
 *   post went in at the left end of its user's range, and a page split there leaves both halves half full: 163 and
 *   122 bytes an entry. Declared in the opposite direction in every column, the listing reads them backwards (the
 *   same order, still no sort) and new posts land at the right end, where PostgreSQL splits pages leaving them full.
 * - `quota_reservations_post_idx` held `(post_id, kind, state)`: a post's reservations are a handful, found by
 *   `post_id` and filtered, and with `state` indexed every spend and refund (a state change) was a non-HOT update
 *   writing a new entry into both of the table's indexes.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`drop index posts_user_listing_idx`.execute(db);
  await sql`
    create index posts_user_listing_idx on posts (user_id, created_at, thread_id desc, thread_order desc, id)
    where status <> 'draft' and hidden = false and promoted_to_id is null`.execute(db);
  await sql`drop index posts_user_status_listing_idx`.execute(db);
  await sql`
    create index posts_user_status_listing_idx on posts (user_id, status, created_at, thread_id desc, thread_order desc, id)
    where promoted_to_id is null`.execute(db);
  await sql`drop index quota_reservations_post_idx`.execute(db);
  await sql`create index quota_reservations_post_idx on quota_reservations (post_id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index quota_reservations_post_idx`.execute(db);
  await sql`create index quota_reservations_post_idx on quota_reservations (post_id, kind, state)`.execute(db);
  await sql`drop index posts_user_status_listing_idx`.execute(db);
  await sql`
    create index posts_user_status_listing_idx on posts (user_id, status, created_at desc, thread_id, thread_order, id desc)
    where promoted_to_id is null`.execute(db);
  await sql`drop index posts_user_listing_idx`.execute(db);
  await sql`
    create index posts_user_listing_idx on posts (user_id, created_at desc, thread_id, thread_order, id desc)
    where status <> 'draft' and hidden = false and promoted_to_id is null`.execute(db);
}
