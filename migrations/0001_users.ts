import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('email', 'text')
    .addColumn('plan', 'text', (col) =>
      col.notNull().check(sql`plan in ('free', 'agent', 'starter', 'pro', 'scale', 'enterprise')`),
    )
    .addColumn('post_quota', 'integer', (col) => col.check(sql`post_quota >= 0`))
    .addColumn('scheduled_quota', 'integer', (col) => col.check(sql`scheduled_quota >= 0`))
    .addColumn('account_limit', 'integer', (col) => col.check(sql`account_limit >= 0`))
    .addColumn('comment_sync_quota', 'integer', (col) => col.check(sql`comment_sync_quota >= 0`))
    .addColumn('x_comment_read_quota', 'integer', (col) => col.check(sql`x_comment_read_quota >= 0`))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute();
  // Emails are optional; when given, one user per address (case-insensitive).
  await sql`create unique index users_email_unique on users (lower(email)) where email is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('users').execute();
}
