import { sql, type Kysely } from 'kysely';

/**
 * The events outbox (decisions.md "Events and webhooks"): one row per event, written in the same transaction as the
 * change it reports, so a change that rolls back leaves no event and a committed one is never without it. `id` is
 * `evt_` + a ULID, so ids sort by creation (the `after` cursor and newest-first listing use it); `request` is the
 * causing API request (`{ id, idempotency_key }`) or null for the service's own work. Kept 30 days (`created_at`).
 *
 * `posts.request_origin`: the API request a post's next worker-side outcome reports (the request that published it
 * immediately, or retried its first comment); null for scheduled posts, whose outcome is the service's own work.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('events')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('user_id', 'uuid', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('type', 'text', (col) => col.notNull())
    .addColumn('data', 'jsonb', (col) => col.notNull())
    .addColumn('request', 'jsonb')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('events_user_id_idx').on('events').columns(['user_id', 'id']).execute();
  await db.schema.createIndex('events_created_at_idx').on('events').column('created_at').execute();
  await db.schema.alterTable('posts').addColumn('request_origin', 'jsonb').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('posts').dropColumn('request_origin').execute();
  await db.schema.dropTable('events').execute();
}
