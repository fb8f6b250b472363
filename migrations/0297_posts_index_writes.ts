import { sql, type Kysely } from 'kysely';

/**
 * Fewer index entries for what every post writes (issue 15, the per-publish write inventory of `bench/publish-writes.ts`):
 * an immediate post wrote 12 entries into the posts table's six indexes, two per index (its insert, and its recording,
 * `publishing` → `published`, which is never HOT: `status` is indexed). Two indexes held entries nothing read:
 * - `posts_status_idx (status, scheduled_at)` is read only for `scheduled` and `publishing` posts (the reconciler's look,
 *   `herald posts stuck`, the cancellations and failures of waiting posts); a draft, published, failed or deleted post
 *   is found by its key, its user's listing indexes, or its own partial index (first comments, 0253). It now holds
 *   those two statuses only: an immediate post writes one entry there (its insert), a draft none, and the index holds
 *   the posts still waiting or in flight instead of every post ever made. A query's `status = 'scheduled'` or `status in
 *   ('scheduled', 'publishing')` implies the predicate, so PostgreSQL uses it for the same lookups.
 * - `posts_user_created_idx (user_id, created_at, id)` served only the default listing with `include_hidden=true`,
 *   walking a user's drafts on the way and sorting each page by the listing's full order. The default listing's index
 *   (0085, 0150) no longer leaves out hidden posts, so it serves both: with `include_hidden` off the listing skips a
 *   hidden post as it reads it (a hidden post is one its user hid: few), with it on it reads a page straight off the
 *   index past any number of drafts. One index fewer for every insert and every update that is not HOT.
 * `test/posts/status-index.test.ts` and `test/foundation/read-cost.test.ts` check the plans on 20,000 drafts.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`drop index posts_status_idx`.execute(db);
  await sql`create index posts_status_idx on posts (status, scheduled_at) where status in ('scheduled', 'publishing')`.execute(db);
  await sql`drop index posts_user_listing_idx`.execute(db);
  await sql`
    create index posts_user_listing_idx on posts (user_id, created_at, thread_id desc, thread_order desc, id)
    where status <> 'draft' and promoted_to_id is null`.execute(db);
  await sql`drop index posts_user_created_idx`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`create index posts_user_created_idx on posts (user_id, created_at, id)`.execute(db);
  await sql`drop index posts_user_listing_idx`.execute(db);
  await sql`
    create index posts_user_listing_idx on posts (user_id, created_at, thread_id desc, thread_order desc, id)
    where status <> 'draft' and hidden = false and promoted_to_id is null`.execute(db);
  await sql`drop index posts_status_idx`.execute(db);
  await sql`create index posts_status_idx on posts (status, scheduled_at)`.execute(db);
}
