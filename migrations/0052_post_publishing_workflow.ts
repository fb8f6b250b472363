import type { Kysely } from 'kysely';

/**
 * `posts.workflow_id`: the workflow that publishes the row when it is neither the post's own (`post-<id>`) nor its
 * thread's: `group-<groupId>` for the posts of an immediate fan-out, which one `publishGroup` publishes together.
 * The reconciler and `herald posts stuck` read it to know which workflow to look for.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('posts').addColumn('workflow_id', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('posts').dropColumn('workflow_id').execute();
}
