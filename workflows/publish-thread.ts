import { condition, defineSignal, log, patched, setHandler } from '@temporalio/workflow';
// Only the activity types: workflow code never loads activity code.
import type { ThreadClaim, ThreadStep } from '../activities/threads';
import { heldCall, whileHeld, type WakeSignals } from './held';
import { CREDENTIAL_WAIT_MS, retryWait } from './retry-wait';
import { listenForSearchAttributes } from './search-attributes-signal';
import { publishParts, UNKNOWN_PART_LOOKED_FOR } from './thread-parts';
import { local, queued, type Steps } from './thread-steps';
import { failureMessage, rollBack, type ThreadRollbackReport } from './thread-rollback';

/**
 * One thread, all or nothing (publishing-api.md "States and transitions" rules 2-4, Guarantees 3-5). Workflow id
 * `thread-<threadId>`.
 *
 *   scheduled ── shared time reached ──▶ publishing ── part 1, 2 … n (each replies to the previous) ──▶ published ─▶ first comment under part n
 *                                              │
 *                                              └── part k refused ──▶ compensation: parts k-1 … 1 deleted (LIFO)
 *                                                     immediate ──▶ rows removed, quota refunded, outcome reported to the request
 *                                                     scheduled ──▶ all removed: retry (retry_count + 1, next_attempt_at set, 3 retries) then failed
 *                                                                   some still live: failed at once (a retry would publish them twice)
 *                                                                   all removed, the account's credential being renewed: scheduled again,
 *                                                                   no retry spent, looked at every 2 minutes for an hour past its time
 *                                                                   all removed, the credential refused: deleted (connection_lost), as
 *                                                                   the account's other scheduled posts
 *
 * The retries are the rows': each claim reports `retry_count` and `next_attempt_at` (`ThreadClaim.retry`), which the
 * workflow takes as its count and wait, so a run started again for the thread (the reconciler, after the embedded
 * Temporal forgot every run) neither sends before the wait is over nor gets its retries back; a new time written by
 * the API clears the wait (README "Posts").
 *
 * "shared time reached" is prepared ahead, as for a post: the workflow wakes `dueLeadMs` before the time and hands the
 * thread to a held `publishThreadWhenDue` that claims it at the instant and sends its parts from there; the loop goes
 * on from what it sent (`holdUntilDue`; README "Threads"). An immediate thread, its request waiting, is started eagerly
 * and sent the same way, from one local activity (`publishNow`); its other steps are local activities too.
 *
 * Its steps in their own modules: the parts in order (`thread-parts.ts`), the rollback and its sentence
 * (`thread-rollback.ts`), the activities with their timeouts (`thread-steps.ts`).
 */

export interface PublishThreadInput {
  threadId: string;
  /** Waits before each retry of a scheduled thread (ms); their count is the number of retries (3). */
  scheduledRetryDelaysMs: number[];
  /** Quick retries of one part's transient failure (ms) before the thread is given up and rolled back. */
  partRetryDelaysMs: number[];
  /**
   * How long before the shared time the workflow wakes and hands the thread to a held `publishThreadWhenDue` (ms).
   * Absent or 0 (runs started before it existed): it wakes at the time and claims then.
   */
  dueLeadMs?: number;
  /**
   * The shared time the thread was created for (ms), when the API starts the workflow right after writing the rows:
   * its first wait, with no first read. The rows stay the truth: a change signals, the claim at the time reads them.
   */
  scheduledAt?: number;
  /**
   * The API's request waits for the outcome (an immediate thread): its steps are local activities, run by the worker
   * that holds the workflow (started eagerly in the API's process), not a task-queue round trip each. Absent: runs
   * started before it existed, and by the reconciler, whose start nobody waits for.
   */
  immediate?: boolean;
}

export type PublishThreadResult =
  | { outcome: 'published'; firstComment: 'posted' | 'failed' | 'skipped' | null }
  | { outcome: 'failed'; code: 'upstream_error' | 'thread_rollback_incomplete'; message: string; rollback: ThreadRollbackReport }
  | { outcome: 'gone' }
  | { outcome: 'cancelled' };

/** The rows changed (rescheduled, edited, cancelled): read them again now rather than at the timer. */
const threadChanged = defineSignal('threadChanged');

/**
 * Patch id: the wake-up is cleared before the rows are read, not after. Cleared after, a change signalled while they
 * were read was lost, and a thread moved earlier then went out at the time the read had seen. Runs recorded before
 * it replay the old order.
 */
const WAKE_CLEARED_BEFORE_READ = 'thread-wake-cleared-before-read';
/**
 * Patch id: a scheduled thread's first wait reads nothing (`scheduledAt`), and it wakes `dueLeadMs` before its time to
 * be held until it (`holdUntilDue`). Runs recorded before it replay their first read and their timer at the time.
 */
const HELD_UNTIL_DUE = 'thread-held-until-due';
/**
 * Patch id: a thread without media skips its media cleanup. A patch, though the claim says whether it has media: a
 * claim made by newer activities may reach older workflow code (a deploy), which scheduled the cleanup regardless.
 */
const CLEANUP_ONLY_WITH_MEDIA = 'thread-cleanup-only-with-media';
/**
 * Patch id: an immediate thread (`immediate`) is claimed and sent by one local activity, `publishThreadNow`, and its
 * other steps are local activities too. Runs recorded before it replay their queued claim, parts and record.
 */
const IMMEDIATE_IN_WORKER = 'thread-immediate-in-worker';
/**
 * Patch id: the retry count and wait are the rows' (`retry_count`, `next_attempt_at`), taken from every claim, and a
 * claim is passed no wait of the run's own. Runs recorded before it count and wait by themselves.
 */
const RETRY_STATE_IN_ROWS = 'thread-retry-state-in-rows';

/**
 * Patch id: a scheduled thread whose account's credential the platform refused, nothing of it live, is cancelled
 * (`deleted`, `connection_lost`) as a scheduled post is, not failed. Runs recorded before it fail it.
 */
const CANCELLED_ON_LOST_CONNECTION = 'thread-cancelled-on-lost-connection';

/**
 * Patch id: a step a hold brought (its own report, or the read that found it stale) keeps a change signalled while
 * that step was being read: the wait that follows wakes at once and the rows are read again. Runs recorded before it
 * cleared the flag there and slept to the step's time, missing the change. Asked only when it matters (a held step,
 * a signal pending), so every other history is as it was. A post's `held-step-keeps-wake`, for threads.
 */
const HELD_STEP_KEEPS_WAKE = 'thread-held-step-keeps-wake';

/**
 * Patch id: a scheduled thread's first part whose look (its mark open: an earlier call may have sent it) a failing
 * credential renewal stopped is not looked for by the rollback (that look met the same renewal, and the part, unknown,
 * failed the thread): the thread waits for the renewal with the mark open, and its next attempt looks first, as a
 * post does (README "Credentials"). When it will not wait (the hour is over), the look is made then. Later parts are
 * looked for as before: their earlier parts are deleted, and a part sent under them could not be found again.
 */
const FIRST_PART_LOOK_AWAITS_CREDENTIAL = 'thread-first-part-look-awaits-credential';

/**
 * Patch id: an immediate thread that waits (its one activity failed while a part's call may still land: the rows
 * read with `lostAt`, or a claim taking it over) is claimed after the wait, not held a lead ahead of it as a
 * scheduled thread's time is (that held an immediate thread in a `publishThreadWhenDue` whose claim, for `scheduled`
 * rows, could never take it). Asked only then, so every other history replays unchanged.
 */
const IMMEDIATE_WAIT_NOT_HELD = 'thread-immediate-wait-not-held';

export async function publishThread(input: PublishThreadInput): Promise<PublishThreadResult> {
  listenForSearchAttributes();
  let woken = false;
  setHandler(threadChanged, () => void (woken = true));
  const signals: WakeSignals = { woken: () => woken, consume: () => void (woken = false) };
  const immediate = input.immediate === true && patched(IMMEDIATE_IN_WORKER);
  const steps = immediate ? local : queued;
  const { bookkeeping } = steps;

  // An immediate thread is never retried (a refusal discards it): its history needs no marker.
  const retryInRows = !immediate && patched(RETRY_STATE_IN_ROWS);
  let notBefore = 0;
  let failures = 0;
  // What an activity that claims and sends by itself reported (a hold at the instant, an immediate thread's one activity).
  let reported: ThreadStep | undefined = immediate ? await publishNow(input.threadId) : undefined;
  // `reported` came from a hold (`holdUntilDue`), read before the turn that takes it.
  let held = false;
  // Rows the API has just inserted are at `schedule_version` 0 (migration 0252).
  let created: ThreadStep | undefined =
    input.scheduledAt !== undefined && input.scheduledAt > Date.now() && patched(HELD_UNTIL_DUE) ? { claim: { kind: 'wait', until: input.scheduledAt, scheduleVersion: 0 } } : undefined;
  for (;;) {
    // Cleared before reading: a change signalled while the rows are being read still wakes the wait that follows. Not
    // when nothing is read: a change signalled before the first wait must still wake it; nor after a held step, read
    // before this turn (in the hold, or by the look that found it stale): a change signalled during that read was not
    // seen by it, and clearing the flag would sleep to a time already replaced (a second reschedule lost).
    const clearedBeforeRead = patched(WAKE_CLEARED_BEFORE_READ);
    if (clearedBeforeRead && !created && !(held && woken && patched(HELD_STEP_KEEPS_WAKE))) woken = false;
    const step: ThreadStep = reported ?? created ?? { claim: null };
    reported = created = undefined;
    held = false;
    const claim: ThreadClaim = step.claim ?? (await bookkeeping.claimThread({ threadId: input.threadId, now: Date.now(), ...(retryInRows ? {} : { notBefore }) }));
    if (claim.kind === 'gone') return { outcome: 'gone' };
    if (retryInRows && claim.retry) ({ failures, notBefore } = claim.retry);
    if (claim.kind === 'wait') {
      if (!clearedBeforeRead) woken = false;
      // Waiting for its time (not a retry's): prepared a lead ahead, so at the instant only claims and sends run. An
      // immediate thread has no time: it waits only for a call that may still land, and is claimed after it.
      const forItsTime = !(immediate && patched(IMMEDIATE_WAIT_NOT_HELD));
      const leadMs = forItsTime && claim.until > notBefore && (input.dueLeadMs ?? 0) > 0 && patched(HELD_UNTIL_DUE) ? input.dueLeadMs! : 0;
      await condition(() => woken, Math.max(1, claim.until - leadMs - Date.now()));
      if (leadMs > 0 && !woken) {
        reported = await holdUntilDue(input.threadId, claim.until, claim.scheduleVersion ?? 0, signals);
        held = true;
      }
      continue;
    }

    const attempt = await publishParts(steps, claim, input.partRetryDelaysMs, step.sent ?? []);
    if (attempt.ok) {
      if (!step.recorded) await bookkeeping.recordThreadPublished({ threadId: input.threadId, parts: attempt.published, publishedAt: Date.now() });
      const firstComment = claim.firstCommentPostId ? await publishFirstComment(steps, claim.firstCommentPostId) : null;
      await cleanUpMedia(steps, input.threadId, claim);
      return { outcome: 'published', firstComment };
    }
    if (attempt.failure.kind === 'not_publishing' && attempt.published.length === 0) return { outcome: 'gone' };

    const deferLook = attempt.failure.awaitingCredential === true && claim.scheduled && attempt.published.length === 0 && patched(FIRST_PART_LOOK_AWAITS_CREDENTIAL);
    let { report: rollback, unconfirmed, settled } = await rollBack(steps, claim, attempt.published, attempt.failure, deferLook);
    // A part that may be live keeps the thread from a retry, as a live one does: a retry would send it again.
    let live = rollback.still_live.length > 0 || unconfirmed !== null;
    const failed = (message: string): PublishThreadResult => ({
      outcome: 'failed',
      code: rollback.still_live.length > 0 ? 'thread_rollback_incomplete' : 'upstream_error',
      message,
      rollback,
    });
    let failure = attempt.failure;
    if (failure.awaitingCredential && claim.scheduled && !live) {
      // Nothing of it is live: it waits for the renewal as a post does, for an hour past its time (`CredentialWait`).
      const credentialWait = await bookkeeping.awaitThreadCredential({ threadId: input.threadId, now: Date.now(), retryAt: Date.now() + CREDENTIAL_WAIT_MS });
      if (credentialWait.waiting) {
        notBefore = Date.now() + CREDENTIAL_WAIT_MS;
        continue;
      }
      failure = { ...failure, awaitingCredential: false, message: credentialWait.message };
      if (deferLook) {
        // It will not wait: the look put off is made now.
        ({ report: rollback, unconfirmed, settled } = await rollBack(steps, claim, attempt.published, attempt.failure));
        live = rollback.still_live.length > 0 || unconfirmed !== null;
      }
    }
    // Its outcome was unknown, but the rollback's look settled it and nothing is live: a retry sends a new thread.
    if (failure.kind === 'unknown_outcome' && settled && !live && claim.scheduled && patched(UNKNOWN_PART_LOOKED_FOR)) failure = { ...failure, kind: 'retryable' };
    if (failure.kind === 'reauthorize' && claim.scheduled && !live && patched(CANCELLED_ON_LOST_CONNECTION)) {
      await bookkeeping.cancelThreadForLostConnection({ threadId: input.threadId });
      await cleanUpMedia(steps, input.threadId, claim);
      return { outcome: 'cancelled' };
    }
    const sentence = failureMessage(claim, failure, rollback, unconfirmed);
    if (failure.kind === 'reauthorize') await bookkeeping.handleThreadConnectionLost({ threadId: input.threadId });

    if (!claim.scheduled) {
      await bookkeeping.discardThread({ threadId: input.threadId, message: sentence, rollback });
      return failed(sentence);
    }
    const wait = live ? null : retryWait(failure, input.scheduledRetryDelaysMs, failures, true);
    if (wait === null) {
      await bookkeeping.failThread({ threadId: input.threadId, message: sentence, rollback });
      await cleanUpMedia(steps, input.threadId, claim);
      return failed(sentence);
    }
    failures += 1;
    await bookkeeping.requeueThread({ threadId: input.threadId, retryAt: Date.now() + wait });
    notBefore = Date.now() + wait;
  }
}

/**
 * An immediate thread claimed and sent by one local activity, its request waiting. One that fails (its time up: a
 * part's call hung, and it goes on in this worker past the activity's end) leaves what the rows say, as a lost hold
 * does: the parts stored went out, the next one is unknown, and its call may still land. The rows are read with the
 * failure's time (`lostAt`, workflow clock), so they answer a wait until that call can no longer land
 * (`CALL_IN_FLIGHT_MS` after its mark) before the part's call looks: called again at once, it looked, found nothing
 * yet, and sent the part a second time. No patch: only the activity's input changes, and a replay reads the recorded
 * result (as `holdUntilDue`'s lost hold, 2026-12-07).
 */
async function publishNow(threadId: string): Promise<ThreadStep> {
  try {
    return await local.platformCall.publishThreadNow({ threadId });
  } catch (err) {
    log.warn('an immediate thread could not be confirmed', { threadId, error: String(err) });
    return local.bookkeeping.heldThreadState({ threadId, lostAt: Date.now() });
  }
}

/**
 * Downloaded media copies go once the thread is done with them; a thread without media has none. Claims made before
 * `hasMedia` existed, and runs whose code before the patch scheduled the cleanup anyway, clean up.
 */
async function cleanUpMedia(steps: Steps, threadId: string, claim: Extract<ThreadClaim, { kind: 'publish' }>): Promise<void> {
  if (claim.hasMedia === false && patched(CLEANUP_ONLY_WITH_MEDIA)) return;
  await steps.bookkeeping.cleanupThreadMedia({ threadId });
}

/** The thread is live whatever happens to its first comment; a crash leaves the comment `pending` (retryable by the user). */
async function publishFirstComment(steps: Steps, postId: string): Promise<'posted' | 'failed' | 'skipped'> {
  try {
    return await steps.platformCall.publishFirstComment({ postId });
  } catch (err) {
    log.warn('the first comment of a thread could not be sent', { postId, error: String(err) });
    return 'failed';
  }
}

/**
 * The thread held in the worker until `dueAt` by `publishThreadWhenDue`, the workflow listening meanwhile (as a
 * post's `holdUntilDue`). A signal makes it read the rows (never claiming them: the hold owns the claim); rescheduled
 * (another time, or another `schedule_version`: moved away and back), the hold is abandoned (its claim, exact in
 * time and version, now refuses it) and the rows' time is the step (a new wait, prepared again). A hold that fails
 * (its worker lost or shut down) is what the rows say: not claimed (scheduled), claimed with the parts whose ids are
 * stored sent and the next one unknown, or gone. Reads made before the rows kept a version report none: version 0.
 */
async function holdUntilDue(threadId: string, dueAt: number, scheduleVersion: number, signals: WakeSignals): Promise<ThreadStep> {
  const holdMs = Math.max(0, dueAt - Date.now());
  return whileHeld<ThreadStep>(
    () => heldCall(holdMs).publishThreadWhenDue({ threadId, dueAt, holdMs, scheduleVersion }),
    // Lost (its heartbeats stopped), its part's call may still be on its way: the rows read with the loss's time say
    // wait until it cannot land (`heldThreadState`'s `lostAt`). No patch: only the activity's input changes, and a
    // replay reads the recorded result (`test/threads/replay.test.ts` replays a lost hold recorded before it).
    () => queued.bookkeeping.heldThreadState({ threadId, lostAt: Date.now() }),
    async () => {
      const seen = await queued.bookkeeping.heldThreadState({ threadId });
      return seen.claim?.kind === 'wait' && (seen.claim.until !== dueAt || (seen.claim.scheduleVersion ?? 0) !== scheduleVersion) ? seen : null;
    },
    signals,
  );
}
