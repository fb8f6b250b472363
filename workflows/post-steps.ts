import { patched, proxyLocalActivities, sleep } from '@temporalio/workflow';
// Only the activity types: workflow code never loads activity code.
import type { CredentialWait, PostActivities, PublishAttempt } from '../activities/posts';
import { CREDENTIAL_WAIT_MS, retryWait } from './retry-wait';

/**
 * The steps one post's publication is made of, shared by `publishPost` (one post) and `publishGroup` (an immediate
 * fan-out). Every step is a local activity: it runs in the worker that holds the workflow task, so an immediate post
 * takes one workflow task from start to result instead of a server round trip per step. A local activity can run
 * again if its workflow task is lost; the steps are written for that (conditional writes; the platform call marks
 * its attempt in the row and asks the platform before sending again, see migration 0050).
 */

export type PublishPostResult = { outcome: 'published'; firstComment: 'posted' | 'failed' | 'skipped' | null } | { outcome: 'failed' | 'gone' | 'cancelled' };

// Reaches a platform: never retried by Temporal. A repeated create is made safe by the adapters (idempotency keys,
// lookups) or reported as `unknown_outcome`; the workflow decides on retries itself so retry_count stays visible.
export const platformCall = proxyLocalActivities<PostActivities>({
  startToCloseTimeout: '10 minutes',
  retry: { maximumAttempts: 1 },
});

// Database bookkeeping: every write is conditional on the status it expects, so repeating one is harmless.
export const bookkeeping = proxyLocalActivities<PostActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 20 },
});

type Refusal = Extract<PublishAttempt, { ok: false; message: string }>;

/**
 * An immediate post, its request waiting: published now, or refused for good, with quick retries of transient faults
 * (`delaysMs`) in between. Its row is `publishing` throughout, which the API refuses to edit or delete, so there is
 * nothing to re-read between attempts; the attempt itself reports a row that is no longer `publishing`.
 * `firstAttempt`: made already (a group's first attempts go out in one activity). `failedBefore`: the attempts a
 * lost run of it failed already (a taken-over post), which its quick retries count from.
 */
export async function publishNow(postId: string, delaysMs: readonly number[], firstAttempt?: PublishAttempt, failedBefore = 0): Promise<PublishPostResult> {
  for (let failures = failedBefore; ; failures++) {
    const attempt = failures === failedBefore && firstAttempt ? firstAttempt : await platformCall.publishToPlatform({ postId, now: Date.now() });
    if (attempt.ok) return afterPublished(postId, attempt);
    if (attempt.kind === 'not_publishing') return { outcome: 'gone' };
    const next = await afterRefusal(postId, attempt, { scheduled: false, delaysMs, failures });
    if ('done' in next) return next.done;
    await sleep(next.retryInMs);
  }
}

/**
 * Patch id: a post taken over by a restarted group goes on from the attempts its lost run failed (the row's
 * `retry_count`, `ClaimResult.retry`), as a single post taken over does. Runs recorded before it started again at 0,
 * so a post could be tried up to twice as often as an immediate post is. Asked only on a taken-over post's claim.
 */
const TAKEN_OVER_KEEPS_RETRIES = 'taken-over-keeps-retries';

/**
 * An immediate post taken over by a new run (the reconciler restarting its lost group): claimed as a single post
 * taken over is (`claimPost`), so it waits for its retry's time and until a call of the lost run can no longer be in
 * flight (`callInFlightUntil`) before its attempt looks: looked for while that call was still on its way, the post
 * was not found and was sent a second time. Then published as an immediate post, its quick retries counted from the
 * ones the lost run spent.
 */
export async function publishTakenOver(postId: string, delaysMs: readonly number[]): Promise<PublishPostResult> {
  for (;;) {
    const claim = await bookkeeping.claimPost({ postId, now: Date.now() });
    if (claim.kind === 'gone') return { outcome: 'gone' };
    if (claim.kind === 'publish') return publishNow(postId, delaysMs, undefined, patched(TAKEN_OVER_KEEPS_RETRIES) ? (claim.retry?.failures ?? 0) : 0);
    await sleep(Math.max(1, claim.until - Date.now()));
  }
}

/** The platform took the post: record it if the attempt could not, then the first comment, then media cleanup. */
export async function afterPublished(postId: string, attempt: Extract<PublishAttempt, { ok: true }>): Promise<PublishPostResult> {
  if (!attempt.recorded) {
    await bookkeeping.recordPublished({ postId, platformPostId: attempt.platformPostId, url: attempt.url, urlUnread: attempt.urlUnread, publishedAt: Date.now() });
  }
  const firstComment = attempt.hasFirstComment ? await platformCall.publishFirstComment({ postId }) : null;
  if (attempt.hasMedia) await bookkeeping.cleanupPostMedia({ postId });
  return { outcome: 'published', firstComment };
}

/**
 * The platform refused: either the post is finished (failed, or cancelled with its account) or it waits `retryInMs`
 * for another attempt, its `retry_count` already raised, its status `requeue`d and the wait's end in its row
 * (`next_attempt_at`, which a workflow started again for it reads).
 */
export async function afterRefusal(
  postId: string,
  attempt: Refusal,
  retry: { scheduled: boolean; delaysMs: readonly number[]; failures: number },
): Promise<{ done: PublishPostResult } | { retryInMs: number; uncounted?: true }> {
  if (attempt.awaitingCredential && retry.scheduled) {
    const credentialWait: CredentialWait | undefined = await bookkeeping.awaitCredential({ postId, now: Date.now(), retryAt: Date.now() + CREDENTIAL_WAIT_MS });
    // Histories recorded before the wait had a limit answer nothing: they wait on.
    if (credentialWait === undefined || credentialWait.waiting) return { retryInMs: CREDENTIAL_WAIT_MS, uncounted: true };
    attempt = { ...attempt, awaitingCredential: false, message: credentialWait.message };
  }
  if (attempt.kind === 'reauthorize') {
    await bookkeeping.handleConnectionLost({ postId, scheduled: retry.scheduled, message: attempt.message });
    await bookkeeping.cleanupPostMedia({ postId });
    return { done: { outcome: retry.scheduled ? 'cancelled' : 'failed' } };
  }
  const wait = retryWait(attempt, retry.delaysMs, retry.failures, retry.scheduled);
  if (wait === null) {
    await bookkeeping.recordFailedAttempt({ postId, message: attempt.message, final: true, requeue: 'publishing' });
    await bookkeeping.cleanupPostMedia({ postId });
    return { done: { outcome: 'failed' } };
  }
  await bookkeeping.recordFailedAttempt({ postId, message: attempt.message, final: false, requeue: retry.scheduled ? 'scheduled' : 'publishing', retryAt: Date.now() + wait });
  return { retryInMs: wait };
}
