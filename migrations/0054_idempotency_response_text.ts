import { type Kysely, sql } from 'kysely';

/**
 * `idempotency_keys.response_body` as text, not jsonb: jsonb reorders object keys (shortest first), so a replay
 * answered the original JSON with its keys reordered. Text keeps the JSON exactly as first sent.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table idempotency_keys alter column response_body type text using response_body::text`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table idempotency_keys alter column response_body type jsonb using response_body::jsonb`.execute(db);
}
