import { sql, type Kysely } from 'kysely';

/**
 * Media held for a user: uploads (`POST /api/v1/media`) and the copies of `media_urls` downloaded when a post is
 * scheduled. The bytes live in Postgres so every API process and the worker see them; they are split into chunks
 * of at most 1 MiB because a single bytea over a few hundred MB cannot be read back through node-postgres (its
 * text form would exceed V8's largest string) and streaming a chunk at a time keeps memory flat when serving.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('media')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('format', 'text', (c) => c.notNull())
    .addColumn('mime_type', 'text', (c) => c.notNull())
    .addColumn('size', 'integer', (c) => c.notNull())
    .addColumn('width', 'integer')
    .addColumn('height', 'integer')
    .addColumn('duration_ms', 'integer')
    .addColumn('sha256', 'text', (c) => c.notNull())
    // 'upload': made by POST /api/v1/media and kept for reuse; 'url': a copy of a post's media_urls, removed after publishing.
    .addColumn('origin', 'text', (c) => c.notNull())
    .addColumn('source_url', 'text')
    .addColumn('chunk_count', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('media_kind_check', sql`kind in ('image', 'video')`)
    .addCheckConstraint('media_format_check', sql`format in ('jpeg', 'png', 'gif', 'webp', 'mp4', 'mov')`)
    .addCheckConstraint('media_origin_check', sql`origin in ('upload', 'url')`)
    .addCheckConstraint('media_size_check', sql`size > 0 and chunk_count > 0`)
    .execute();
  await db.schema.createIndex('media_user_created_idx').on('media').columns(['user_id', 'created_at']).execute();

  await db.schema
    .createTable('media_chunks')
    .addColumn('media_id', 'uuid', (c) => c.notNull().references('media.id').onDelete('cascade'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('data', 'bytea', (c) => c.notNull())
    .addPrimaryKeyConstraint('media_chunks_pkey', ['media_id', 'seq'])
    .execute();
  // The chunks are already compressed media: skip TOAST's pointless compression attempt.
  await sql`alter table media_chunks alter column data set storage external`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('media_chunks').execute();
  await db.schema.dropTable('media').execute();
}
