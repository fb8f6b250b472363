import { sql, type Kysely } from 'kysely';

/**
 * The reconciler looks every minute for published posts whose first comment stayed `pending` (their run lost before
 * the comment step, `postsWithFirstCommentLeft`): a partial index holds only those rows, so the look reads a handful
 * of index entries rather than every published post.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index posts_first_comment_left_idx on posts (updated_at) where status = 'published' and first_comment_status = 'pending'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index posts_first_comment_left_idx`.execute(db);
}
