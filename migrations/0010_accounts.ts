import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('accounts')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('platform', 'text', (c) => c.notNull())
    // The platform's own id for the account: reconnecting the same platform account reuses this row.
    .addColumn('platform_account_id', 'text', (c) => c.notNull())
    .addColumn('username', 'text', (c) => c.notNull())
    .addColumn('display_name', 'text')
    .addColumn('profile_url', 'text')
    .addColumn('via', 'text')
    .addColumn('kind', 'text')
    .addColumn('own_credentials', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('premium', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('active', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('inactive_reason', 'text')
    .addColumn('timezone', 'text')
    // AES-256-GCM sealed JSON of the platform credentials; never returned by the API.
    .addColumn('credentials_sealed', 'text', (c) => c.notNull())
    // Non-secret settings the adapter derived at verification (instance origin, person URN, ...).
    .addColumn('settings', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('accounts_user_platform_account_unique', ['user_id', 'platform', 'platform_account_id'])
    .addCheckConstraint(
      'accounts_inactive_reason_check',
      sql`inactive_reason is null or inactive_reason in ('disconnected', 'deactivated', 'connection_lost', 'reauthorization_required')`,
    )
    .execute();
  await db.schema.createIndex('accounts_user_idx').on('accounts').columns(['user_id', 'created_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('accounts').execute();
}
