import { sql, type Kysely } from 'kysely';

/**
 * The start of the earliest platform call of a post whose outcome is still open (README "Posts", 2026-12-07): while
 * `publish_attempt_started_at` is set, the look before sending again searches the platform back to this time, not
 * only 15 minutes back from the look (a post rescheduled, or waiting for a renewal or a long retry, was looked for
 * outside its window and sent a second time). `publish_attempt_started_at` keeps the latest call's start, which says
 * how long that call may still be in flight. Read only while the mark is open, so it is never cleared; rows marked
 * before it read null and fall back to their mark.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table posts add column publish_attempt_first_at timestamptz`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table posts drop column publish_attempt_first_at`.execute(db);
}
