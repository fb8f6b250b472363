import { condition, continueAsNew, defineSignal, patched, setHandler, workflowInfo } from '@temporalio/workflow';
// Only the activity types: workflow code never loads activity code.
import type { ClaimResult, PublishAttempt } from '../activities/posts';
import { heldCall, whileHeld, type WakeSignals } from './held';
import { listenForSearchAttributes } from './search-attributes-signal';
import { afterPublished, afterRefusal, bookkeeping, platformCall, publishNow, type PublishPostResult } from './post-steps';

/**
 * One post, from its row to `published` or `failed` (publishing-api.md "Post status"). Workflow id `post-<postId>`.
 *
 *   scheduled ── time reached ──▶ publishing ── platform took it ──▶ published ─▶ first comment ─▶ media cleaned up
 *       ▲                              │
 *       └── failed attempt, retry ─────┤ (retry_count + 1, next_attempt_at set; 3 retries after 1, 5, 15 min or the platform's wait)
 *                                      └── retries spent / not retryable ──▶ failed (quota refunded)
 *
 * An attempt that meets the account's credential ended and its renewal failing puts the post back to `scheduled`
 * without spending a retry and looks again every 2 minutes (decisions.md: it waits for the renewal), for an hour past
 * its time; then such attempts are failed ones, with a sentence saying the renewal failed (`CredentialWait`).
 *
 * "time reached": `scheduled_at` and, after a failed attempt, `next_attempt_at` have passed. A new `scheduled_at`
 * written by the API clears `next_attempt_at` (a new time is a new plan); `retry_count` stays, and so do the retries
 * it has spent (README "Posts").
 *
 * The row is the truth: every loop reads it (`claimPost`), so a reschedule, an edit or a cancellation made by the
 * API is seen at the next read, and signals only make that read happen now; the first wait, for the time the API
 * wrote (`scheduledAt`), reads nothing until then or a signal. The retries are the row's too: each claim reports
 * `retry_count` and `next_attempt_at` (`ClaimResult.retry`) and the workflow takes them as its count and its wait, so a
 * run started again for the post (the reconciler, after the embedded Temporal forgot every run at a restart) neither
 * sends before the wait is over nor gets its retries back. An immediate post (`publishing` from
 * the start) gets a couple of quick retries of transient failures while its request waits.
 * "time reached" is prepared ahead: the workflow wakes `dueLeadMs` before `scheduled_at` and hands the post to a held
 * `publishWhenDue` activity that claims and sends it at the instant (`holdUntilDue`; README "Scheduled bursts").
 */

export interface PublishPostInput {
  postId: string;
  /** The API created the row `publishing` and waits: publish straight away (no first read of the row). */
  immediate?: boolean;
  /** Waits before each retry of a scheduled post (ms); their count is the number of retries (3). */
  scheduledRetryDelaysMs: number[];
  /** Quick retries of an immediate post's transient failure (ms), inside the API request. */
  immediateRetryDelaysMs: number[];
  /**
   * Carried over by continue-as-new: attempts already failed and the earliest next attempt (workflow time, ms). Runs
   * with `retry-state-in-row` take both from their claims anyway.
   */
  carried?: { failures: number; notBefore: number };
  /** History length after which a waiting workflow continues as new (default 2,000; tests make it small). */
  historyLimit?: number;
  /**
   * How long before `scheduled_at` the workflow wakes and hands the post to a held `publishWhenDue` (ms). Absent or
   * 0 (runs started before it existed): it wakes at the time and claims then.
   */
  dueLeadMs?: number;
  /**
   * The time the post was created scheduled for (ms), when the API starts the workflow right after writing the row:
   * its first wait, with no first look at the row (a claim that cannot take it yet and a read, per post of a burst).
   * The row stays the truth: the claim at the time reads it, and a change made meanwhile signals a look now.
   */
  scheduledAt?: number;
}

/** A post edited or rescheduled many times starts a fresh history rather than growing one without bound. */
const HISTORY_LIMIT = 2_000;

/** Patch id: the claim and the platform attempt of a due post run as one local activity (`claimAndPublish`). */
const CLAIM_AND_PUBLISH = 'claim-and-publish';
/** Patch id: a scheduled post wakes `dueLeadMs` before its time and is held in the worker until it (`holdUntilDue`). */
const PREPARE_BEFORE_DUE = 'prepare-before-due';
/**
 * Patch id: the retry count and wait are the row's (`retry_count`, `next_attempt_at`), taken from every claim, and a
 * claim is passed no wait of the run's own (one kept across a reschedule would delay the new time). Runs recorded
 * before it count and wait by themselves, as they did.
 */
const RETRY_STATE_IN_ROW = 'retry-state-in-row';
/**
 * Patch id: a step a hold brought (its own report, or the read that found it stale) keeps a change signalled while
 * that step was being read: the wait that follows wakes at once and the row is read again. Runs recorded before it
 * cleared the flag there and slept to the step's time, missing the change. Asked only when it matters (a held step,
 * a signal pending), so every other history is as it was.
 */
const HELD_STEP_KEEPS_WAKE = 'held-step-keeps-wake';

/** What one claim-and-attempt step reports (`claimAndPublish`, `publishWhenDue`): no claim means claim again. */
type Step = { claim: ClaimResult | null; attempt?: PublishAttempt };

const reschedulePost = defineSignal('reschedulePost');
const postEdited = defineSignal('postEdited');
const cancelPost = defineSignal<[string | null]>('cancelPost');

export async function publishPost(input: PublishPostInput): Promise<PublishPostResult> {
  listenForSearchAttributes();
  if (input.immediate && !input.carried) return publishNow(input.postId, input.immediateRetryDelaysMs);
  let woken = false;
  const wake = () => void (woken = true);
  setHandler(reschedulePost, wake);
  setHandler(postEdited, wake);
  setHandler(cancelPost, wake);
  const signals: WakeSignals = { woken: () => woken, consume: () => void (woken = false) };

  const retryInRow = patched(RETRY_STATE_IN_ROW);
  let notBefore = input.carried?.notBefore ?? 0;
  let failures = input.carried?.failures ?? 0;
  const claimInput = () => ({ postId: input.postId, now: Date.now(), ...(retryInRow ? {} : { notBefore }) });
  let held: Step | undefined;
  // A row the API has just inserted is at `schedule_version` 0 (migration 0252).
  let created: Step | undefined =
    input.scheduledAt !== undefined && input.scheduledAt > Date.now() ? { claim: { kind: 'wait', until: input.scheduledAt, scheduleVersion: 0 } } : undefined;
  for (;;) {
    // Reset before reading: a change signalled while the row is being read still wakes the wait that follows. Not
    // when nothing is read: a change signalled before the first wait must still wake it; nor after a held step, read
    // before this turn (in the hold, or by the look that found it stale): a change signalled during that read was
    // not seen by it, and clearing the flag would sleep to a time already replaced (a second reschedule lost).
    if (!created && !(held && woken && patched(HELD_STEP_KEEPS_WAKE))) woken = false;
    // Claim and attempt in one local activity (or the held step did); a failed claim is made again with the
    // bookkeeping retries. Runs recorded before this change replay their separate claim (the patch marker says which).
    const step: Step =
      held ??
      created ??
      (patched(CLAIM_AND_PUBLISH) ? await platformCall.claimAndPublish(claimInput()) : { claim: null });
    held = created = undefined;
    const claim: ClaimResult = step.claim ?? (await bookkeeping.claimPost(claimInput()));
    if (claim.kind === 'gone') return { outcome: failures > 0 ? 'cancelled' : 'gone' };
    if (retryInRow && claim.retry) ({ failures, notBefore } = claim.retry);
    if (claim.kind === 'wait') {
      // Waiting for its time (not for a retry's): prepared a lead ahead, so a burst's workflow tasks, dispatches and
      // replays spread over the lead and only claims, platform calls and records run at the instant.
      const leadMs = claim.until > notBefore && (input.dueLeadMs ?? 0) > 0 && patched(PREPARE_BEFORE_DUE) ? input.dueLeadMs! : 0;
      await condition(() => woken, Math.max(1, claim.until - leadMs - Date.now()));
      if (workflowInfo().historyLength > (input.historyLimit ?? HISTORY_LIMIT)) {
        await continueAsNew<typeof publishPost>({ ...input, immediate: false, scheduledAt: undefined, carried: { failures, notBefore } });
      }
      if (leadMs > 0 && !woken) held = await holdUntilDue(input.postId, claim.until, claim.scheduleVersion ?? 0, signals);
      continue;
    }
    const scheduled = claim.scheduled;

    const attempt: PublishAttempt = step.attempt ?? (await platformCall.publishToPlatform({ postId: input.postId, now: Date.now() }));
    if (attempt.ok) return afterPublished(input.postId, attempt);
    if (attempt.kind === 'not_publishing') return { outcome: 'gone' };
    const next = await afterRefusal(input.postId, attempt, {
      scheduled,
      delaysMs: scheduled ? input.scheduledRetryDelaysMs : input.immediateRetryDelaysMs,
      failures,
    });
    if ('done' in next) return next.done;
    if (!next.uncounted) failures += 1;
    notBefore = Date.now() + next.retryInMs;
  }
}

/**
 * The post held in the worker until `dueAt` by `publishWhenDue`, the workflow listening meanwhile. A signal makes it
 * read the row (never claiming it: the hold owns the claim). Rescheduled (another time, or another
 * `schedule_version`: moved away and back), the hold is abandoned (its claim, exact in time and version, now refuses
 * it) and the row's time is the step: a new wait, prepared again, so an earlier time is not missed. Otherwise (still
 * due at `dueAt` in the same version, cancelled, being published) the hold goes on and reports at the instant. A
 * hold that fails (its worker lost or shut down) is no claim: the loop claims with retries and attempts, as before
 * this patch. Reads made before the row kept a version report none: version 0, as the hold's own.
 */
async function holdUntilDue(postId: string, dueAt: number, scheduleVersion: number, signals: WakeSignals): Promise<Step> {
  const holdMs = Math.max(0, dueAt - Date.now());
  return whileHeld<Step>(
    () => heldCall(holdMs).publishWhenDue({ postId, dueAt, holdMs, scheduleVersion }),
    async () => ({ claim: null }),
    async () => {
      const seen = await bookkeeping.heldPostState({ postId });
      return seen?.kind === 'wait' && (seen.until !== dueAt || (seen.scheduleVersion ?? 0) !== scheduleVersion) ? { claim: seen } : null;
    },
    signals,
  );
}
