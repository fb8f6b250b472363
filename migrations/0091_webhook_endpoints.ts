import { sql, type Kysely } from 'kysely';

/**
 * Webhook endpoints (decisions.md "Events and webhooks"): at most 10 a user (counted under the user's row lock).
 * Secrets are sealed at rest like platform credentials (`src/crypto/sealed-box.ts`); during a rotation the previous
 * secret signs beside the new one until `previous_secret_expires_at`. `events` null = every type.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('url', 'text', (col) => col.notNull())
    .addColumn('events', sql`text[]`)
    .addColumn('description', 'text')
    .addColumn('enabled', 'boolean', (col) => col.notNull().defaultTo(true))
    .addColumn('disabled_reason', 'text')
    .addColumn('secret_sealed', 'text', (col) => col.notNull())
    .addColumn('previous_secret_sealed', 'text')
    .addColumn('previous_secret_expires_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('webhook_endpoints_user_id_idx').on('webhook_endpoints').column('user_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('webhook_endpoints').execute();
}
