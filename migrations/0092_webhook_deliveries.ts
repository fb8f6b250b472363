import { sql, type Kysely } from 'kysely';

/**
 * Delivery attempts (`GET /api/v1/webhooks/:id/deliveries`: event, time, status code or error, duration), kept 30
 * days like events, and `webhook_endpoints.failing_since`: when the endpoint's current run of failed attempts began
 * (null after a success); five days of it disables the endpoint.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('endpoint_id', 'uuid', (col) => col.notNull().references('webhook_endpoints.id').onDelete('cascade'))
    .addColumn('event_id', 'text', (col) => col.notNull().references('events.id').onDelete('cascade'))
    .addColumn('attempted_at', 'timestamptz', (col) => col.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('error', 'text')
    .addColumn('duration_ms', 'integer', (col) => col.notNull())
    .addColumn('delivered', 'boolean', (col) => col.notNull())
    .execute();
  await db.schema.createIndex('webhook_deliveries_endpoint_idx').on('webhook_deliveries').columns(['endpoint_id', 'attempted_at']).execute();
  await db.schema.createIndex('webhook_deliveries_event_idx').on('webhook_deliveries').column('event_id').execute();
  await db.schema.alterTable('webhook_endpoints').addColumn('failing_since', 'timestamptz').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('webhook_endpoints').dropColumn('failing_since').execute();
  await db.schema.dropTable('webhook_deliveries').execute();
}
