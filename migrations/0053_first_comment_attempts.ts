import type { Kysely } from 'kysely';

/**
 * `posts.first_comment_attempt_started_at`: the first comment's counterpart of `publish_attempt_started_at`
 * (migration 0050). Set when its platform call begins; found set by another attempt at a still `pending` comment, it
 * means an earlier call never reported back (a local activity run again), so the comment is reported unconfirmed
 * instead of being sent twice. A user's retry (`failed` → `pending`) clears it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('posts').addColumn('first_comment_attempt_started_at', 'timestamptz').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('posts').dropColumn('first_comment_attempt_started_at').execute();
}
