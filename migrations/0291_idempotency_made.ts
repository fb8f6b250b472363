import type { Kysely } from 'kysely';

/**
 * `idempotency_keys.made`: what the claim's request committed (a create's posts or threads), written in the create's
 * own statement (`src/idempotency/key-claim.ts`). The answer is stored in a later write; a process that died between
 * the two let the claim lapse with its lease, and the retry with the same key ran the create again (a post twice). A
 * takeover now finds `made` and answers from those rows (api/idempotency.ts). Null: nothing committed yet, or a route
 * that records nothing. `json`, not `jsonb`: its text is kept as written, so an answer made from it (a draft's
 * warnings) keeps its key order.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('idempotency_keys').addColumn('made', 'json').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('idempotency_keys').dropColumn('made').execute();
}
