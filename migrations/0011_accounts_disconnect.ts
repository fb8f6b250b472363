import { sql, type Kysely } from 'kysely';

/**
 * Disconnecting an account wipes its credentials (decisions.md "Accounts"): `credentials_sealed` becomes nullable,
 * and null exactly when the account is disconnected. Every inactive account says why.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('accounts').alterColumn('credentials_sealed', (c) => c.dropNotNull()).execute();
  // Rows disconnected before this migration (or kept by its `down`) lose what is left of their credentials.
  await sql`update accounts set credentials_sealed = null where inactive_reason = 'disconnected'`.execute(db);
  await db.schema
    .alterTable('accounts')
    .addCheckConstraint(
      'accounts_credentials_wiped_when_disconnected',
      sql`(credentials_sealed is null) = (coalesce(inactive_reason, '') = 'disconnected')`,
    )
    .execute();
  await db.schema
    .alterTable('accounts')
    .addCheckConstraint('accounts_inactive_has_reason', sql`active or inactive_reason is not null`)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('accounts').dropConstraint('accounts_inactive_has_reason').execute();
  await db.schema.alterTable('accounts').dropConstraint('accounts_credentials_wiped_when_disconnected').execute();
  // A disconnected row has nothing to restore; an empty marker keeps NOT NULL satisfiable.
  await sql`update accounts set credentials_sealed = '' where credentials_sealed is null`.execute(db);
  await db.schema.alterTable('accounts').alterColumn('credentials_sealed', (c) => c.setNotNull()).execute();
}
