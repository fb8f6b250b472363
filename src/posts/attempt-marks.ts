import { sql, type QueryCreator, type SqlBool } from 'kysely';
import type { Database, Db } from '../db';
import { idIsOneOf, oneOrManyIds, precompiled, type OneOrManyIds } from '../db/precompiled';
import type { PostLink } from '../platforms/types';
import { urlUnreadOf } from './post-link';

/**
 * The worker's first writes of an attempt to publish: a due post's claim (`scheduled` → `publishing`) and the mark
 * that a platform call begins (migration 0050), which also stores a thread's part sent before it. A mark returns the
 * row with its version and its account's columns, so the send reads nothing more and the outcome
 * (`attempt-outcomes.ts`) can be written in one statement when nothing wrote the row since.
 */

/** A scheduled post that is due: `scheduled` → `publishing`. False when it is no longer scheduled. */
export async function claimScheduled(db: Db, postId: string): Promise<boolean> {
  const claimed = await db
    .updateTable('posts')
    .set({ status: 'publishing', request_origin: null, updated_at: sql`now()` })
    .where('id', '=', postId)
    .where('status', '=', 'scheduled')
    .executeTakeFirst();
  return claimed.numUpdatedRows > 0n;
}

/**
 * What an attempt reads of the post's account in the statement that marks it (`account_*`, all null when the account
 * row is gone): the credentials the send needs (`publishingContextOfClaimed`), and its state as the post view shows
 * it, which `recordPublishedAll` writes into the event without reading it again.
 */
export const publishingAccountColumns = [
  'accounts.user_id as account_user_id',
  'accounts.active as account_active',
  'accounts.credentials_sealed as account_credentials_sealed',
  'accounts.settings as account_settings',
  'accounts.credential_expires_at as account_credential_expires_at',
  'accounts.credential_refused_at as account_credential_refused_at',
  'accounts.inactive_reason as account_inactive_reason',
] as const;

/**
 * The version of a row as a write returns it (its `xmin`: the transaction that last wrote it). A later write
 * conditional on it changes the row only if nothing else wrote it in between (`recordPublishedAll`).
 */
export const rowVersion = sql<string>`posts.xmin::text`.as('row_version');

/**
 * Whether an earlier platform call never reported back (its `mark`, the post's or its first comment's, was already
 * set): the subquery reads the row as it was before the write.
 */
export function earlierAttemptOpen(mark: 'publish_attempt_started_at' | 'first_comment_attempt_started_at') {
  return sql<boolean>`(select earlier.${sql.ref(mark)} is not null from posts earlier where earlier.id = posts.id)`.as('earlier_attempt_open');
}

/**
 * How long a platform call may still be out after its mark: the room a run gives one (`platformCall`'s 10-minute
 * start-to-close in `workflows/post-steps.ts`, `PLATFORM_TIME_MS` after a hold in `workflows/held.ts`; workflow code
 * cannot import this module). A call of a run that was terminated or lost is not stopped by it: it goes on in its
 * worker until it answers or its requests time out.
 */
export const CALL_IN_FLIGHT_MS = 10 * 60_000;

/**
 * Until when (ms) the latest call of a post's open attempt may still be in flight: `CALL_IN_FLIGHT_MS` after its mark,
 * 0 when no attempt is open. A run that takes over a `publishing` post (the reconciler's restart after the old run's
 * hold claimed it) waits until then before its look: looked for while still on its way, the post is not found and is
 * sent a second time. Read against the workflow's clock, as the claim's other times are (a database clock here kept
 * a time-skipped run waiting for ever: its every claim found the 10 minutes still ahead).
 */
export function callInFlightUntil(row: { publish_attempt_started_at: Date | null }): number {
  return row.publish_attempt_started_at === null ? 0 : row.publish_attempt_started_at.getTime() + CALL_IN_FLIGHT_MS;
}

/**
 * A due scheduled post claimed and its platform call marked as begun (as `beginPublishAttempt`) in one statement:
 * `scheduled` → `publishing` only when its `scheduled_at`, and its retry's `next_attempt_at` after a failed attempt,
 * have passed by `now` (the workflow's clock). It returns the
 * columns of the post's account that the send needs (`account_*`, null when the account row is gone), so the send
 * reads nothing more. Undefined when it is not `scheduled` or not yet due; the caller reads the row to tell which.
 */
export async function claimDueScheduled(db: Db, postId: string, now: Date) {
  return (await markAttempts(db, [postId], { dueBy: now })).at(0);
}

/**
 * `claimDueScheduled` of posts held until their instant (`publishWhenDue`), in one statement for many (a burst's claims
 * at :00 are a few statements, not one per post): each claimed only if it is still `scheduled` at exactly
 * `scheduledAt` (to the millisecond, as the workflow read it) and at the `schedule_version` its hold was given
 * (`versions`, by post id; migration 0252), so a hold made stale by a reschedule or a cancellation never takes the
 * row, not even one moved away and back to the same time. Returns the rows it took (with their `schedule_version`);
 * a post missing from the answer was not taken.
 */
export async function claimAllScheduledAt(db: Db, postIds: readonly string[], scheduledAt: Date, versions: Readonly<Record<string, number>>) {
  return markAttempts(db, postIds, { scheduledAt, versions: heldVersions(versions) });
}

/**
 * The version rule of a held claim (`claimAllScheduledAt`, and a thread's, `claimThreadsScheduledAt`): the row is at
 * the `schedule_version` its hold was given. `versions`: a JSON object of versions by hold key (`heldVersions`), one
 * parameter, so one statement shape whatever the batch; `key`: the column the holds are keyed by (a post's `id`, a
 * thread's `thread_id`: its parts move together, `moveScheduledTime`, so they share their version).
 */
export function atHeldVersion(versions: unknown, key: 'id' | 'thread_id') {
  return sql<SqlBool>`schedule_version = (${versions}::jsonb ->> ${sql.ref(key)}::text)::int`;
}

/** The `versions` parameter of `atHeldVersion`. */
export const heldVersions = (versions: Readonly<Record<string, number>>): string => JSON.stringify(versions);

/**
 * Marks a platform call as begun (migration 0050) and returns the `publishing` row, with whether an earlier call never
 * reported back (its mark still set), and its account's columns the send needs (`publishingAccountColumns`, as
 * `claimDueScheduled` returns them). One statement: the subquery reads the row as it was before this update.
 */
export async function beginPublishAttempt(db: Db, postId: string) {
  return (await beginPublishAttempts(db, [postId]))[0];
}

/** `beginPublishAttempt` of many posts (an immediate fan-out's first attempts) in one statement. */
export async function beginPublishAttempts(db: Db, postIds: readonly string[]) {
  return markAttempts(db, postIds, {});
}

/** A thread part that went out, its platform id to store (`recordPartPublished`). */
export interface PartPublished extends PostLink {
  postId: string;
  platformPostId: string;
}

/**
 * `beginPublishAttempt` of a thread's next part, storing the part sent before it in the same statement, if nothing
 * wrote that part's row since its own mark (`row_version`). With the mark, `stored_version`: that part's version
 * after its store, or null when it was not stored (written since, or no longer `publishing`: the caller stores it
 * with `recordPartPublished`). Undefined when the next part is not `publishing`.
 */
export async function beginPartAttemptAfter(db: Db, postId: string, previous: PartPublished & { markedVersion: string }) {
  const stored = { ...storedPartOf(previous), storedSince: previous.markedVersion };
  return (await markAttemptsQuery.execute(db, { ...oneOrManyIds([postId]), ...stored }))[0];
}

/** One part of a thread went out: its platform id is stored at once (it stays `publishing`), so what is live is never only in memory; its attempt is closed. */
export async function recordPartPublished(db: Db, part: PartPublished): Promise<void> {
  await partStoredUpdate(db, storedPartOf(part)).execute();
}

/** A part's store (`recordPartPublished`); with `storedSince`, only if its row is still that version. */
type StoredPart = { storedPartId: string; storedPlatformPostId: string; storedUrl: string | null; storedUrlUnread: boolean; storedSince?: string };

function storedPartOf(part: PartPublished): StoredPart {
  return { storedPartId: part.postId, storedPlatformPostId: part.platformPostId, storedUrl: part.url, storedUrlUnread: urlUnreadOf(part) };
}

function partStoredUpdate(db: QueryCreator<Database>, part: StoredPart) {
  const update = db
    .updateTable('posts')
    .set({
      platform_post_id: part.storedPlatformPostId,
      platform_post_url: part.storedUrl,
      platform_post_url_unread: part.storedUrlUnread,
      publish_attempt_started_at: null,
      updated_at: sql`now()`,
    })
    .where('id', '=', part.storedPartId)
    .where('status', '=', sql.lit('publishing'));
  return part.storedSince === undefined ? update : update.where(sql`xmin`, '=', sql`${part.storedSince}::xid`);
}

/**
 * The adapter's handle of the open attempt (`PublishRequest.attempt`, migration 0250), stored before the step whose
 * answer may be lost, while the row is `publishing` with its mark set. Returns the row's version after the write when
 * nothing else wrote it since `markedVersion` (the mark's `row_version`), else null: no view shows the handle, so with
 * that version the outcome is still recorded in one statement (`recordPublishedAll`). A row no longer `publishing` is
 * not written (null).
 */
export async function recordAttemptHandle(db: Db, postId: string, handle: string, markedVersion: string): Promise<string | null> {
  const written = await db
    .updateTable('posts')
    .set({ publish_attempt_handle: handle })
    .where('id', '=', postId)
    .where('status', '=', sql.lit('publishing'))
    .where('publish_attempt_started_at', 'is not', null)
    .returning(sql<string | null>`case when (select earlier.xmin::text from posts earlier where earlier.id = posts.id) = ${markedVersion} then posts.xmin::text end`.as('version'))
    .executeTakeFirst();
  return written?.version ?? null;
}

/**
 * Which mark: a claim of `scheduled` rows due by `dueBy` (`claimDueScheduled`) or scheduled at exactly `scheduledAt`
 * and `versions` (`claimAllScheduledAt`), which makes them `publishing`; with neither, the attempt of rows already `publishing`,
 * and with `storedPartId`, a thread part stored before it in the same statement (`beginPartAttemptAfter`).
 */
type MarkKind = { dueBy?: Date; scheduledAt?: Date; versions?: string };
type MarkValues = OneOrManyIds & MarkKind & Partial<StoredPart>;

/**
 * The attempt's mark of a claim and of a post already `publishing`, one statement for any number of posts: the rows
 * of `postIds` in the status the mark expects get their mark (a claim also its new status), and each comes back as a
 * `MarkedPost`, joined to its account's columns in the same statement. Compiled once per kind of mark and sent as a
 * named statement (src/db/precompiled.ts: every publish and every due post runs it).
 */
const markAttemptsQuery = precompiled((db, values: MarkValues) => {
  const claim = values.dueBy !== undefined || values.scheduledAt !== undefined;
  const stored = values.storedPartId !== undefined;
  // The store's CTE is read by the last column alone (`stored_version`); without it the statement is the mark alone.
  const creator = stored
    ? (db.with('stored', (qb) => partStoredUpdate(qb, values as StoredPart).returning(sql<string>`xmin::text`.as('version'))) as unknown as QueryCreator<Database>)
    : db;
  return creator
    .with('marked', (qb) => {
      let update = claim
        ? qb
            .updateTable('posts')
            .set({ status: 'publishing', request_origin: null, ...markColumns, updated_at: sql`now()` })
            .where('status', '=', sql.lit('scheduled'))
        : qb.updateTable('posts').set(markColumns).where('status', '=', sql.lit('publishing'));
      update = update.where((eb) => idIsOneOf(eb.ref('id'), values));
      // Due: its time and its retry's, where it has them, have passed (`dueBy` once: one parameter per value).
      if (values.dueBy !== undefined) update = update.where(sql`coalesce(greatest(scheduled_at, next_attempt_at), '-infinity'::timestamptz)`, '<=', values.dueBy);
      if (values.scheduledAt !== undefined) update = update.where(sql`date_trunc('milliseconds', scheduled_at)`, '=', values.scheduledAt);
      if (values.versions !== undefined) update = update.where(atHeldVersion(values.versions, 'id'));
      return update.returningAll().returning([earlierAttemptOpen('publish_attempt_started_at'), rowVersion]);
    })
    .selectFrom('marked')
    .leftJoin('accounts', 'accounts.id', 'marked.account_id')
    .selectAll('marked')
    .select(publishingAccountColumns)
    .$if(stored, (qb) => qb.select(sql<string | null>`(select version from stored)`.as('stored_version')));
});

/**
 * A mark keeps the adapter's handle (migration 0250) only while the attempt it was recorded with is still open (the
 * right side reads the row before the update): a handle left by an attempt that reported back is dropped, never
 * handed to a later one.
 */
const handleOfOpenAttempt = sql<string | null>`case when publish_attempt_started_at is null then null else publish_attempt_handle end`;

/**
 * The earliest call whose outcome is still open (migration 0276): this one when no earlier call is open, else the
 * earlier one's (rows marked before the column: their mark). The look before sending again searches back to it
 * (`PublishRequest.earlierAttemptSince`): the latest mark alone moved on with every attempt that sent nothing (a look
 * stopped by a renewal, a request not built), and a look 15 minutes back from its own time missed a post rescheduled,
 * or waiting for a renewal or a long retry, past that.
 */
const firstOfOpenAttempts = sql<Date>`case when publish_attempt_started_at is null then now() else coalesce(publish_attempt_first_at, publish_attempt_started_at) end`;

/** What every mark writes: the call begins now (`publish_attempt_started_at`, the latest call's start). */
const markColumns = { publish_attempt_started_at: sql<Date>`now()`, publish_attempt_first_at: firstOfOpenAttempts, publish_attempt_handle: handleOfOpenAttempt };

async function markAttempts(db: Db, postIds: readonly string[], mark: MarkKind) {
  if (postIds.length === 0) return [];
  return markAttemptsQuery.execute(db, { ...oneOrManyIds(postIds), ...mark });
}

/**
 * A `publishing` row as an attempt marked it (`markAttempts`): the row after the mark, whether an earlier call never
 * reported back, its version (`row_version`) and its account's columns (`account_*`). The send reads its credentials
 * from it (`publishingContextOfClaimed`) and `recordPublishedAll` its version and account state.
 */
export type MarkedPost = Awaited<ReturnType<typeof markAttempts>>[number];
