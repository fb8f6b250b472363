import { sql, type Kysely } from 'kysely';

/**
 * The accounts whose credential renewal a platform refused for good in the last while (README "Credentials",
 * 2026-12-07): one row per account, its time on the database's clock, removed when the account renews again. Many
 * refusals of one platform's accounts at once, outnumbering its renewals, look like the platform's outage or Herald's
 * app rather than users revoking: the renewal holds those refusals back instead of losing every connection
 * (`src/accounts/mass-refusal.ts`). The index serves that count.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table credential_refusals (
      account_id uuid primary key references accounts (id) on delete cascade,
      platform text not null,
      refused_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index credential_refusals_platform_idx on credential_refusals (platform, refused_at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table credential_refusals`.execute(db);
}
