import { sql, type Kysely } from 'kysely';

/**
 * One row per event and endpoint it is delivered to, written by the dispatcher in the transaction that marks the
 * event dispatched: where the delivery stands (`attempts` made, when the next is due, `settled_at` once delivered,
 * disabled or given up). Temporal in memory forgets its workflows on restart; this is what the webhook reconciler
 * restarts them from, each resuming its retry schedule where it was. Goes with its event (30 days) or endpoint.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('webhook_dispatches')
    .addColumn('event_id', 'text', (col) => col.notNull().references('events.id').onDelete('cascade'))
    .addColumn('endpoint_id', 'uuid', (col) => col.notNull().references('webhook_endpoints.id').onDelete('cascade'))
    .addColumn('attempts', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('settled_at', 'timestamptz')
    .addPrimaryKeyConstraint('webhook_dispatches_pkey', ['event_id', 'endpoint_id'])
    .execute();
  await sql`create index webhook_dispatches_pending_idx on webhook_dispatches (next_attempt_at) where settled_at is null`.execute(db);
  await db.schema.createIndex('webhook_dispatches_endpoint_idx').on('webhook_dispatches').column('endpoint_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('webhook_dispatches').execute();
}
