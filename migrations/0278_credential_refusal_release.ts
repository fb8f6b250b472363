import { sql, type Kysely } from 'kysely';

/**
 * An operator's release of held refusals (README "Credentials" and "Operator command", 2026-12-07): `herald
 * credentials release` sets `released_at` on the refusals the mass-loss guard holds back; such an account's next
 * refusal is marked lost like any single one, and a released refusal no longer counts towards holding others
 * (`src/accounts/mass-refusal.ts`). Nothing else reads the column; renewing again deletes the row as before.
 *
 * And the index the guard's renewed count needs (accounts of the platform renewed in the last hour, counted at every
 * guarded refusal: in a mass event, each held account again at every retry). Measured on 100,000 accounts (30,000 x
 * renewing every 96 minutes), two runs: a sequential scan of every account, 38-60 ms under EXPLAIN ANALYZE; with the
 * index 4.3-6.6 ms (index-only, vacuumed) to 8.7-13.4 ms (bitmap scan, every x row updated since the last vacuum). Renewals already
 * write an index entry (`accounts_expiring_credentials_idx` covers `credential_expires_at`), so this adds one more, no
 * lost HOT update. Partial: accounts never renewed are never counted.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table credential_refusals add column released_at timestamptz`.execute(db);
  await sql`create index accounts_renewed_idx on accounts (platform, credential_issued_at) where credential_issued_at is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index accounts_renewed_idx`.execute(db);
  await sql`alter table credential_refusals drop column released_at`.execute(db);
}
