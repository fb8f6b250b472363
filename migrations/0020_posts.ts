import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('posts')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    // Kept when the account is disconnected; the API shows null for a disconnected account.
    .addColumn('account_id', 'uuid', (c) => c.references('accounts.id').onDelete('set null'))
    .addColumn('platform', 'text', (c) => c.notNull())
    .addColumn('text', 'text', (c) => c.notNull().defaultTo(''))
    // The media as asked for (urls / upload ids / alt); null when the post has none.
    .addColumn('media', 'jsonb')
    .addColumn('first_comment_text', 'text')
    .addColumn('first_comment_status', 'text')
    .addColumn('first_comment_comment_id', 'uuid')
    .addColumn('first_comment_error', 'text')
    .addColumn('configuration', 'jsonb')
    .addColumn('platform_post_id', 'text')
    .addColumn('platform_post_url', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('scheduled_at', 'timestamptz')
    .addColumn('timezone', 'text')
    .addColumn('published_at', 'timestamptz')
    .addColumn('thread_id', 'uuid')
    .addColumn('thread_order', 'integer')
    .addColumn('group_id', 'uuid')
    .addColumn('error_message', 'text')
    .addColumn('retry_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('hidden', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('promoted_from_draft_id', 'uuid')
    // Set on a draft once promoted: the draft answers 409 post_not_editable from then on and leaves listings.
    .addColumn('promoted_to_id', 'uuid')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('posts_status_check', sql`status in ('draft', 'scheduled', 'publishing', 'published', 'failed', 'deleted')`)
    .addCheckConstraint(
      'posts_first_comment_status_check',
      sql`first_comment_status is null or first_comment_status in ('pending', 'posted', 'failed')`,
    )
    .execute();
  await db.schema.createIndex('posts_user_created_idx').on('posts').columns(['user_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('posts_account_scheduled_idx').on('posts').columns(['account_id', 'scheduled_at']).execute();
  await db.schema.createIndex('posts_group_idx').on('posts').column('group_id').execute();
  await db.schema.createIndex('posts_thread_idx').on('posts').columns(['thread_id', 'thread_order']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('posts').execute();
}
