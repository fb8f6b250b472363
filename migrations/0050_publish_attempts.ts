import type { Kysely } from 'kysely';

/**
 * `posts.publish_attempt_started_at`: set when a platform call for the post begins, cleared when that attempt's
 * failure is recorded. Found set at the start of another attempt, it means an earlier one never reported back
 * (a worker that stopped mid-call; a local activity run again after its workflow task was retried), so the
 * platform is asked before the post is sent again. This is what keeps a post single when Temporal runs a call twice.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('posts').addColumn('publish_attempt_started_at', 'timestamptz').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('posts').dropColumn('publish_attempt_started_at').execute();
}
