import { sql, type Kysely } from 'kysely';

/**
 * Every rotated-out webhook secret keeps signing for its own 24 hours (decisions.md "Events and webhooks"). One
 * `previous_secret_*` pair held only the last one, so a second rotation within a day cut the first secret off at
 * once. `retired_secrets` holds up to three `{ sealed, expires_at }`, newest first (`rotateOwnSecret` keeps them);
 * a still-signing previous secret is carried over.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('webhook_endpoints').addColumn('retired_secrets', 'jsonb', (col) => col.notNull().defaultTo(sql`'[]'::jsonb`)).execute();
  await sql`update webhook_endpoints
    set retired_secrets = jsonb_build_array(jsonb_build_object('sealed', previous_secret_sealed, 'expires_at', previous_secret_expires_at))
    where previous_secret_sealed is not null and previous_secret_expires_at > now()`.execute(db);
  await db.schema.alterTable('webhook_endpoints').dropColumn('previous_secret_sealed').dropColumn('previous_secret_expires_at').execute();
}

/** Back to one previous secret: the newest retired one. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('webhook_endpoints').addColumn('previous_secret_sealed', 'text').addColumn('previous_secret_expires_at', 'timestamptz').execute();
  await sql`update webhook_endpoints
    set previous_secret_sealed = retired_secrets -> 0 ->> 'sealed', previous_secret_expires_at = (retired_secrets -> 0 ->> 'expires_at')::timestamptz
    where jsonb_array_length(retired_secrets) > 0`.execute(db);
  await db.schema.alterTable('webhook_endpoints').dropColumn('retired_secrets').execute();
}
