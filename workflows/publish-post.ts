import { condition, continueAsNew, defineSignal, proxyLocalActivities, setHandler, workflowInfo } from '@temporalio/workflow';
// Only the activity types: workflow code never loads activity code.
import type { ClaimResult, PostActivities, PublishAttempt } from '../activities/posts';

/**
 * One post, from its row to `published` or `failed` (publishing-api.md "Post status"). Workflow id `post-<postId>`.
 *
 *   scheduled ── time reached ──▶ publishing ── platform took it ──▶ published ─▶ first comment ─▶ media cleaned up
 *       ▲                              │
 *       └── failed attempt, retry ─────┤ (retry_count + 1; 3 retries after 1, 5, 15 min or the platform's wait)
 *                                      └── retries spent / not retryable ──▶ failed (quota refunded)
 *
 * The row is the truth: every loop reads it (`claimPost`), so a reschedule, an edit or a cancellation made by the
 * API is seen at the next read, and signals only make that read happen now. An immediate post (`publishing` from
 * the start) gets a couple of quick retries of transient failures while its request waits.
 */

export interface PublishPostInput {
  postId: string;
  /** The API created the row `publishing` and waits: publish straight away (no first read of the row). */
  immediate?: boolean;
  /** Waits before each retry of a scheduled post (ms); their count is the number of retries (3). */
  scheduledRetryDelaysMs: number[];
  /** Quick retries of an immediate post's transient failure (ms), inside the API request. */
  immediateRetryDelaysMs: number[];
  /** Carried over by continue-as-new: attempts already failed and the earliest next attempt (workflow time, ms). */
  carried?: { failures: number; notBefore: number };
  /** History length after which a waiting workflow continues as new (default 2,000; tests make it small). */
  historyLimit?: number;
}

/** A post edited or rescheduled many times starts a fresh history rather than growing one without bound. */
const HISTORY_LIMIT = 2_000;

export type PublishPostResult = { outcome: 'published'; firstComment: 'posted' | 'failed' | 'skipped' | null } | { outcome: 'failed' | 'gone' | 'cancelled' };

export const reschedulePost = defineSignal('reschedulePost');
export const postEdited = defineSignal('postEdited');
export const cancelPost = defineSignal<[string | null]>('cancelPost');

// Every step is a local activity: it runs in the worker that holds the workflow task, so an immediate post takes
// one workflow task from start to result instead of a server round trip per step. A local activity can run again
// if its workflow task is lost; the steps are written for that (conditional writes; the platform call marks its
// attempt in the row and asks the platform before sending again, see migration 0050).

// Reaches a platform: never retried by Temporal. A repeated create is made safe by the adapters (idempotency keys,
// lookups) or reported as `unknown_outcome`; the workflow decides on retries itself so retry_count stays visible.
const platformCall = proxyLocalActivities<PostActivities>({
  startToCloseTimeout: '10 minutes',
  retry: { maximumAttempts: 1 },
});

// Database bookkeeping: every write is conditional on the status it expects, so repeating one is harmless.
const bookkeeping = proxyLocalActivities<PostActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 20 },
});

export async function publishPost(input: PublishPostInput): Promise<PublishPostResult> {
  let woken = false;
  const wake = () => void (woken = true);
  setHandler(reschedulePost, wake);
  setHandler(postEdited, wake);
  setHandler(cancelPost, wake);

  let notBefore = input.carried?.notBefore ?? 0;
  let failures = input.carried?.failures ?? 0;
  let skipClaim = input.immediate === true;
  for (;;) {
    // Reset before reading: a change signalled while the row is being read still wakes the wait that follows.
    woken = false;
    let scheduled = false;
    if (skipClaim) {
      skipClaim = false;
    } else {
      const claim: ClaimResult = await bookkeeping.claimPost({ postId: input.postId, now: Date.now(), notBefore });
      if (claim.kind === 'gone') return { outcome: failures > 0 ? 'cancelled' : 'gone' };
      if (claim.kind === 'wait') {
        await condition(() => woken, Math.max(1, claim.until - Date.now()));
        if (workflowInfo().historyLength > (input.historyLimit ?? HISTORY_LIMIT)) {
          await continueAsNew<typeof publishPost>({ ...input, immediate: false, carried: { failures, notBefore } });
        }
        continue;
      }
      scheduled = claim.scheduled;
    }

    const attempt: PublishAttempt = await platformCall.publishToPlatform({ postId: input.postId, now: Date.now() });
    if (attempt.ok) {
      if (!attempt.recorded) {
        await bookkeeping.recordPublished({ postId: input.postId, platformPostId: attempt.platformPostId, url: attempt.url, publishedAt: Date.now() });
      }
      const firstComment = attempt.hasFirstComment ? await platformCall.publishFirstComment({ postId: input.postId }) : null;
      if (attempt.hasMedia) await bookkeeping.cleanupPostMedia({ postId: input.postId });
      return { outcome: 'published', firstComment };
    }
    if (attempt.kind === 'not_publishing') return { outcome: 'gone' };
    if (attempt.kind === 'reauthorize') {
      await bookkeeping.handleConnectionLost({ postId: input.postId, scheduled, message: attempt.message });
      await bookkeeping.cleanupPostMedia({ postId: input.postId });
      return { outcome: scheduled ? 'cancelled' : 'failed' };
    }

    const wait = retryWait(attempt, scheduled ? input.scheduledRetryDelaysMs : input.immediateRetryDelaysMs, failures, scheduled);
    if (wait === null) {
      await bookkeeping.recordFailedAttempt({ postId: input.postId, message: attempt.message, final: true, requeue: 'publishing' });
      await bookkeeping.cleanupPostMedia({ postId: input.postId });
      return { outcome: 'failed' };
    }
    failures += 1;
    await bookkeeping.recordFailedAttempt({ postId: input.postId, message: attempt.message, final: false, requeue: scheduled ? 'scheduled' : 'publishing' });
    notBefore = Date.now() + wait;
  }
}

/**
 * How long to wait before the next attempt, or null to give up now. Never retried: an unknown outcome (it may be
 * live), an account that can no longer send. A scheduled post retries any other refusal (the platform may accept it
 * later); an immediate one only transient faults and short rate limits, since its request is waiting.
 */
function retryWait(attempt: Extract<PublishAttempt, { ok: false; message: string }>, delays: number[], failures: number, scheduled: boolean): number | null {
  if (failures >= delays.length) return null;
  if (attempt.kind === 'unknown_outcome' || attempt.kind === 'account_inactive' || attempt.kind === 'gone') return null;
  const delay = delays[failures]!;
  const named = (attempt.retryAfterSeconds ?? 0) * 1000;
  if (scheduled) return Math.max(delay, named);
  if (attempt.kind === 'retryable') return delay;
  if (attempt.kind === 'rate_limited' && named <= delay) return delay;
  return null;
}
