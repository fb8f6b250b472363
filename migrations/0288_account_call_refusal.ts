import { sql, type Kysely } from 'kysely';

/**
 * A held call refusal ends at the account's next successful platform call (README "Credentials", 2026-12-07 night):
 * `accounts.credential_refused_at` is set with every call refusal `recordCallRefusal` records, so the row an attempt
 * already reads with its claim tells a successful call that there is a refusal to end, and nothing is asked when there
 * is none (the publish path's statement count). Milliseconds (`timestamptz(3)`), as a JavaScript `Date` holds them: the
 * call ends the refusal it read only if the value is unchanged (a later refusal is kept). Null on every existing row:
 * a refusal recorded before this migration ends as before, an hour after its last refusal.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table accounts add column credential_refused_at timestamptz(3)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table accounts drop column credential_refused_at`.execute(db);
}
