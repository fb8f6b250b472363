import { sql, type Kysely } from 'kysely';

/**
 * Scheduled posts of one account stay at least 5 minutes apart under simultaneous requests (publishing-api.md
 * "Limits": "Spacing of scheduled posts"). The rule itself is `checkScheduleSpacing`, run on the times read before the
 * write; two creates (or reschedules) for one account at the same moment each read before the other wrote, and both
 * passed. This constraint makes the second write fail (SQLSTATE 23P01, `posts_scheduled_spacing`) once the first
 * committed; the service then reads again and the rule refuses it with its own message (`againOnSpacingClash`).
 *
 * - Half-open ranges `[t, t + 5 min)` overlap exactly when two times are less than 5 minutes apart: exactly 5 minutes
 *   is allowed, as the rule says. The time is taken as UTC wall time because `timestamptz + interval` is not
 *   immutable (an index cannot use it); 5 minutes are the same in every zone.
 * - The parts of one thread share one time: its first part holds the slot for all of them (the rule leaves a post's
 *   own thread out), so a thread is one entry and no part clashes with another.
 * - Only a post waiting for the time a client gave it holds its slot here: never attempted (`retry_count = 0`) and
 *   not waiting for a retry or a credential (`next_attempt_at is null`). A post goes back to `scheduled` after a
 *   failed attempt or to wait for its account's renewal, at a time already past; a post scheduled meanwhile near that
 *   time must not make that write (a workflow's) fail. The rule still counts such a post against new times.
 *
 * Fails with the clash named if two waiting posts of one account are already less than 5 minutes apart (only the race
 * this closes could have written them): reschedule or delete one of the two and start again.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create extension if not exists btree_gist`.execute(db);
  try {
    await sql`alter table posts add constraint posts_scheduled_spacing exclude using gist (
        account_id with =,
        tsrange(scheduled_at at time zone 'UTC', (scheduled_at at time zone 'UTC') + interval '5 minutes') with &&
      ) where (status = 'scheduled' and retry_count = 0 and next_attempt_at is null and scheduled_at is not null
        and (thread_id is null or thread_order = 1))`.execute(db);
  } catch (err) {
    const detail = (err as { detail?: string }).detail;
    if ((err as { code?: string }).code !== '23P01') throw err;
    throw new Error(
      `Migration 0230: two scheduled posts of one account are less than 5 minutes apart (${detail ?? 'no detail'}; the key is ` +
        `the account and the time). Reschedule or delete one of them and start Herald again.`,
    );
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table posts drop constraint posts_scheduled_spacing`.execute(db);
}
