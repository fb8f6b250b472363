import type { Kysely } from 'kysely';

/**
 * `posts.next_attempt_at`: when the next attempt of a post (or every part of a thread) waiting after a failed one may
 * be made, on the workflow's clock; null when none waits. The row, not the workflow, keeps the retry's wait, as it
 * keeps `retry_count`: a workflow started again for the post (the embedded Temporal forgets every run at a restart)
 * reads both and neither sends before the wait is over nor gets its retries back. A new time written by the API ends
 * the wait (README "Posts").
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('posts').addColumn('next_attempt_at', 'timestamptz').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('posts').dropColumn('next_attempt_at').execute();
}
