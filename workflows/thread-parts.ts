import { log, patched, sleep } from '@temporalio/workflow';
// Only the activity types: workflow code never loads activity code.
import type { PartAttempt, ThreadActivities, ThreadClaim } from '../activities/threads';
import { retryWait } from './retry-wait';
import type { Steps } from './thread-steps';
import type { Failure, PublishedPart } from './thread-rollback';

/** A thread's parts step (`publishThread`): each part in order, replying to the previous, with its quick retries. */

/**
 * Patch id: a part whose outcome is unknown (its send unanswered: the activity lost or timed out, or the platform's
 * answer) is called once more at once: its mark is open, so that call asks the platform first and takes the part
 * found (the thread carries on from it) or sends it where nothing is there, as a post's next attempt does; and a part
 * still unknown then whose rollback's look settled it (deleted, or not there), nothing left live, is a failed attempt
 * a scheduled thread retries (publishing-api.md Guarantee 5). Runs recorded before it rolled back at once and failed.
 */
export const UNKNOWN_PART_LOOKED_FOR = 'thread-unknown-part-looked-for';

/**
 * Publishes the parts in order, each replying to the previous one (root: the first); stops at the first refusal.
 * `sent`: the first parts' attempts made already (by the hold at the instant, or an immediate thread's one activity),
 * null where the outcome is unknown.
 */
export async function publishParts(
  steps: Steps,
  claim: Extract<ThreadClaim, { kind: 'publish' }>,
  retryDelaysMs: number[],
  sent: ReadonlyArray<PartAttempt | null>,
): Promise<{ ok: true; published: PublishedPart[] } | { ok: false; published: PublishedPart[]; failure: Failure }> {
  const published: PublishedPart[] = [];
  // An activity that crashed or timed out may have published: its outcome is unknown, and the thread is rolled back.
  const unconfirmed: PartAttempt = { ok: false, kind: 'unknown_outcome', message: `${claim.platformName} did not confirm whether the post was published; check the account before sending it again.`, retryAfterSeconds: null };
  const call = async (input: Parameters<ThreadActivities['publishThreadPart']>[0]): Promise<PartAttempt> => {
    try {
      return await steps.platformCall.publishThreadPart(input);
    } catch (err) {
      log.warn('a thread part could not be confirmed', { postId: input.postId, error: String(err) });
      return unconfirmed;
    }
  };
  for (const [index, part] of claim.parts.entries()) {
    const previous = published[published.length - 1];
    const replyTo = previous ? { platformPostId: previous.platformPostId, rootPlatformPostId: published[0]!.platformPostId } : null;
    let result = index < sent.length ? (sent[index] ?? unconfirmed) : await call({ postId: part.postId, replyTo });
    // A transient fault (the platform said nothing was created) is retried on that part, so one hiccup does not undo
    // the thread. An unknown outcome is called once more at once, not counted as a retry: that call looks first (the
    // part's mark is open) and takes the part found, or sends it where nothing is there.
    let looked = false;
    for (let retry = 0; !result.ok; ) {
      if (result.kind === 'unknown_outcome' && !looked && patched(UNKNOWN_PART_LOOKED_FOR)) {
        looked = true;
        result = await call({ postId: part.postId, replyTo });
        continue;
      }
      const wait = retryWait(result, retryDelaysMs, retry, false);
      if (wait === null) break;
      retry += 1;
      await sleep(wait);
      result = await call({ postId: part.postId, replyTo });
    }
    if (!result.ok) return { ok: false, published, failure: { ...result, threadOrder: part.threadOrder } };
    published.push({ postId: part.postId, threadOrder: part.threadOrder, platformPostId: result.platformPostId, url: result.url, urlUnread: result.urlUnread });
  }
  return { ok: true, published };
}
