import { sql, type Kysely } from 'kysely';

/**
 * `post_analytics`: the stored snapshot of one published post's numbers (decisions.md "Analytics"), one row a post.
 * `metrics` is null until the first platform read succeeds. `refresh_claim_id`/`refresh_claimed_at` mark a platform
 * read in flight, so concurrent requests in any API process read the platform once; a claim older than the read's
 * timeout is abandoned (its process died) and may be taken over.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('post_analytics')
    .addColumn('post_id', 'uuid', (c) => c.primaryKey().references('posts.id').onDelete('cascade'))
    .addColumn('metrics', 'jsonb')
    .addColumn('synced_at', 'timestamptz')
    .addColumn('next_refresh_after', 'timestamptz')
    .addColumn('refresh_claim_id', 'uuid')
    .addColumn('refresh_claimed_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('post_analytics_snapshot_complete', sql`(metrics is null) = (synced_at is null) and (synced_at is null) = (next_refresh_after is null)`)
    .addCheckConstraint('post_analytics_claim_complete', sql`(refresh_claim_id is null) = (refresh_claimed_at is null)`)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('post_analytics').execute();
}
