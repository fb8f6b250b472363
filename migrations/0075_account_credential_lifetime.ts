import { sql, type Kysely } from 'kysely';

/**
 * When an account's credential ends (decisions.md "Keeping credentials alive"). `credential_expires_at`: null where
 * the credential does not expire. `credential_issued_at`: when the stored token's lifetime began, as far as Herald
 * knows; null when it does not (a token handed over at connect time): the credential workflow then renews it as soon
 * as it may, to learn its real lifetime. The partial index serves the reconciler, which gives each such account its workflow.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('accounts')
    .addColumn('credential_expires_at', 'timestamptz')
    .addColumn('credential_issued_at', 'timestamptz')
    .execute();
  // Accounts connected before this migration: the latest their tokens can end, counted from now, with their age unknown
  // (the lifetimes of src/platforms/renewal/lifetimes.ts as they are today), so the reconciler gives them a workflow.
  await sql`
    update accounts set credential_expires_at = now() + interval '2 hours'
    where platform = 'x' and not own_credentials and credentials_sealed is not null`.execute(db);
  await sql`
    update accounts set credential_expires_at = now() + interval '60 days'
    where credentials_sealed is not null and (platform in ('threads', 'linkedin') or (platform = 'instagram' and via = 'instagram'))`.execute(db);
  await db.schema
    .createIndex('accounts_expiring_credentials_idx')
    .on('accounts')
    .column('credential_expires_at')
    .where(sql.ref('credential_expires_at'), 'is not', null)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('accounts_expiring_credentials_idx').execute();
  await db.schema.alterTable('accounts').dropColumn('credential_issued_at').dropColumn('credential_expires_at').execute();
}
