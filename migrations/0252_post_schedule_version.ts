import { sql, type Kysely } from 'kysely';

/**
 * `posts.schedule_version`: how many times the API moved the post's time (`moveScheduledTime` adds one). A held post
 * (`publishWhenDue`, README "Scheduled bursts") is claimed at its instant only if the row is still at the time AND the
 * version its workflow read: a hold abandoned by a reschedule away and back to the same time (T1 → T2 → T1) would
 * otherwise find the row at its time again and claim it from under the workflow's current hold. Rows already waiting
 * start at 0, which is what every hold started before this column read (see `claimAllScheduledAt`).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('posts').addColumn('schedule_version', 'integer', (col) => col.notNull().defaultTo(sql`0`)).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('posts').dropColumn('schedule_version').execute();
}
