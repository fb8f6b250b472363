import { sql, type Kysely } from 'kysely';

/**
 * When an account's current run of refusals began (README "Credentials", 2026-12-07 evening): a platform call refused
 * as with a dead credential where nothing can renew it (x OAuth 1.0a, x without a refresh token or app credentials,
 * telegram, mastodon, ...) is taken for a lost connection only when it is refused again at least 10 minutes after the
 * first refusal, and not while the platform refuses many accounts at once (`src/accounts/mass-refusal.ts`). The row's
 * `refused_at` moves with every refusal, so the first one needs its own column. Renewal refusals leave it as set at
 * their insert; nothing reads it for them. Rows existing before take the migration's time.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table credential_refusals add column first_refused_at timestamptz not null default now()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table credential_refusals drop column first_refused_at`.execute(db);
}
