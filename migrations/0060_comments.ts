import { sql, type Kysely } from 'kysely';

/**
 * The comments inbox (publishing-api.md "Comment object", "Listing meta", "Comment flags"; decisions.md "Comments"):
 * - `comments`: the stored snapshot, one row per platform comment of a post. `id` is the service's stable id: a
 *   refresh upserts on (post_id, platform_comment_id), so the same platform comment keeps its id. `deleted` only ever
 *   moves to true. `last_seen_at` is the start of the last complete refresh that saw the comment; a complete refresh
 *   marks deleted what it no longer saw. The listing pages on (post_id, created_at desc, id desc) by keyset, and on
 *   (post_id, platform_parent_id, ...) when filtered to one comment's replies.
 * - `comment_sync_states`: one row per post whose comments were ever asked for: what `meta.sync` reports, the failure
 *   count the backoff doubles on, and when the post was last listed (background refreshes run only while it is read).
 * - `usage_months.comment_syncs` / `x_comment_reads`: the monthly allowances, taken by conditional increments of the
 *   user's month row so concurrent refreshes never overshoot.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('comments')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('post_id', 'uuid', (c) => c.notNull().references('posts.id').onDelete('cascade'))
    .addColumn('platform', 'text', (c) => c.notNull())
    .addColumn('platform_comment_id', 'text', (c) => c.notNull())
    .addColumn('platform_parent_id', 'text')
    .addColumn('author_handle', 'text', (c) => c.notNull())
    .addColumn('author_display_name', 'text', (c) => c.notNull())
    .addColumn('author_platform_id', 'text', (c) => c.notNull())
    .addColumn('author_avatar_url', 'text')
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('likes', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('replies', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('hidden', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('deleted', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('own', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('replied', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('replied_at', 'timestamptz')
    .addColumn('reply_comment_id', 'uuid', (c) => c.references('comments.id').onDelete('set null'))
    .addColumn('first_seen_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_seen_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('comments_post_platform_comment_key', ['post_id', 'platform_comment_id'])
    .execute();
  await sql`create index comments_listing_idx on comments (post_id, created_at desc, id desc)`.execute(db);
  await sql`create index comments_replies_idx on comments (post_id, platform_parent_id, created_at desc, id desc)`.execute(db);
  await sql`create index comments_reply_comment_idx on comments (reply_comment_id) where reply_comment_id is not null`.execute(db);

  await db.schema
    .createTable('comment_sync_states')
    .addColumn('post_id', 'uuid', (c) => c.primaryKey().references('posts.id').onDelete('cascade'))
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('ok'))
    .addColumn('synced_at', 'timestamptz')
    .addColumn('reason', 'text')
    .addColumn('next_sync_after', 'timestamptz')
    .addColumn('consecutive_failures', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_listed_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint(
      'comment_sync_states_status_check',
      sql`status in ('ok', 'unsupported', 'permission', 'rate_limited', 'budget', 'plan', 'error')`,
    )
    .execute();

  await db.schema
    .alterTable('usage_months')
    .addColumn('comment_syncs', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('x_comment_reads', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('usage_months').dropColumn('x_comment_reads').dropColumn('comment_syncs').execute();
  await db.schema.dropTable('comment_sync_states').execute();
  await db.schema.dropTable('comments').execute();
}
