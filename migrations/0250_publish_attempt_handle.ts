import type { Kysely } from 'kysely';

/**
 * `posts.publish_attempt_handle`: what the adapter recorded with the open attempt (migration 0050) before the step
 * whose answer may be lost (an Instagram or Threads container about to be published). Opaque to the core: the retry of
 * that attempt hands it back to the adapter (`PublishRequest.attempt`), which settles the earlier call from it. A mark
 * made when no earlier attempt is open clears it (`markAttemptsQuery`), so it never outlives its attempt.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('posts').addColumn('publish_attempt_handle', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('posts').dropColumn('publish_attempt_handle').execute();
}
