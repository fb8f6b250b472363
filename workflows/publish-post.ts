import { condition, continueAsNew, defineSignal, patched, setHandler, workflowInfo } from '@temporalio/workflow';
// Only the activity types: workflow code never loads activity code.
import type { ClaimResult, PublishAttempt } from '../activities/posts';
import { afterPublished, afterRefusal, bookkeeping, platformCall, publishNow, type PublishPostResult } from './post-steps';

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

/** Patch id: the claim and the platform attempt of a due post run as one local activity (`claimAndPublish`). */
const CLAIM_AND_PUBLISH = 'claim-and-publish';

const reschedulePost = defineSignal('reschedulePost');
const postEdited = defineSignal('postEdited');
const cancelPost = defineSignal<[string | null]>('cancelPost');

export async function publishPost(input: PublishPostInput): Promise<PublishPostResult> {
  if (input.immediate && !input.carried) return publishNow(input.postId, input.immediateRetryDelaysMs);
  let woken = false;
  const wake = () => void (woken = true);
  setHandler(reschedulePost, wake);
  setHandler(postEdited, wake);
  setHandler(cancelPost, wake);

  let notBefore = input.carried?.notBefore ?? 0;
  let failures = input.carried?.failures ?? 0;
  for (;;) {
    // Reset before reading: a change signalled while the row is being read still wakes the wait that follows.
    woken = false;
    // Claim and attempt in one local activity; a failed claim is made again with the bookkeeping retries. Runs
    // recorded before this change replay their separate claim (the patch marker says which).
    const step = patched(CLAIM_AND_PUBLISH)
      ? await platformCall.claimAndPublish({ postId: input.postId, now: Date.now(), notBefore })
      : { claim: null, attempt: undefined };
    const claim: ClaimResult = step.claim ?? (await bookkeeping.claimPost({ postId: input.postId, now: Date.now(), notBefore }));
    if (claim.kind === 'gone') return { outcome: failures > 0 ? 'cancelled' : 'gone' };
    if (claim.kind === 'wait') {
      await condition(() => woken, Math.max(1, claim.until - Date.now()));
      if (workflowInfo().historyLength > (input.historyLimit ?? HISTORY_LIMIT)) {
        await continueAsNew<typeof publishPost>({ ...input, immediate: false, carried: { failures, notBefore } });
      }
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
