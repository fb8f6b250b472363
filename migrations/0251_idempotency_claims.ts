import { sql, type Kysely } from 'kysely';

/**
 * Each claim of an Idempotency-Key carries its own id (`claim_id`), and every write of a claimed row (lease renewal,
 * stored answer, release) is conditional on it (api/idempotency.ts). Conditional only on user and key, a request that
 * stalled past its lease and was taken over still wrote: it overwrote the new claimant's stored answer, or deleted its
 * claim. Rows written before this hold no claim id; a takeover gives them one.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('idempotency_keys').addColumn('claim_id', 'uuid').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table idempotency_keys drop column claim_id`.execute(db);
}
