import { sql, type Kysely } from 'kysely';

/**
 * An operator's release of held refusals (README "Credentials" and "Operator command", 2026-12-07): `herald
 * credentials release` sets `released_at` on the refusals the mass-loss guard holds back; such an account's next
 * refusal is marked lost like any single one, and a released refusal no longer counts towards holding others
 * (`src/accounts/mass-refusal.ts`). Nothing else reads the column; renewing again deletes the row as before.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table credential_refusals add column released_at timestamptz`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table credential_refusals drop column released_at`.execute(db);
}
