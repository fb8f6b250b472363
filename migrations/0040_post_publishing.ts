import { sql, type Kysely } from 'kysely';

/**
 * What publishing posts needs besides the `posts` table:
 * - `usage_months`: one row per user and UTC month, the counters the quota checks read. Creating a post locks its
 *   user's row (`SELECT ... FOR UPDATE`), so concurrent requests of one user are serialised and never overshoot.
 * - `quota_reservations`: one row per charge a post carries (the post, its scheduled slot, its first comment, an x
 *   link charge). `reserved` → `spent` when the platform took it, → `refunded` on failure or cancellation; the state
 *   change is the idempotency of a refund (refunding twice finds no `reserved` row the second time).
 * - `posts.first_comment_platform_id`: the platform's id of a posted first comment (the comments feature links it).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('usage_months')
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    // `YYYY-MM`, UTC.
    .addColumn('month', 'text', (c) => c.notNull())
    .addColumn('posts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('scheduled', 'integer', (c) => c.notNull().defaultTo(0))
    // Paid plans past their post quota: posts billed per post.
    .addColumn('overage', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('x_link_posts', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('usage_months_pk', ['user_id', 'month'])
    .execute();
  await db.schema
    .createTable('quota_reservations')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('post_id', 'uuid', (c) => c.notNull())
    .addColumn('month', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull().defaultTo('reserved'))
    .addColumn('overage', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('quota_reservations_kind_check', sql`kind in ('post', 'scheduled', 'first_comment', 'x_link', 'x_link_first_comment')`)
    .addCheckConstraint('quota_reservations_state_check', sql`state in ('reserved', 'spent', 'refunded')`)
    .execute();
  await db.schema.createIndex('quota_reservations_post_idx').on('quota_reservations').columns(['post_id', 'kind', 'state']).execute();
  await db.schema.alterTable('posts').addColumn('first_comment_platform_id', 'text').execute();
  await db.schema.createIndex('posts_status_idx').on('posts').columns(['status', 'scheduled_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('posts_status_idx').execute();
  await db.schema.alterTable('posts').dropColumn('first_comment_platform_id').execute();
  await db.schema.dropTable('quota_reservations').execute();
  await db.schema.dropTable('usage_months').execute();
}
