import { log, patched } from '@temporalio/workflow';
// Only the activity types: workflow code never loads activity code.
import type { PartAttempt, PartRemoval, ThreadClaim, UnconfirmedPart } from '../activities/threads';
import type { Steps } from './thread-steps';

/**
 * A thread's compensation (`publishThread`, publishing-api.md "States and transitions" rule 2): what went out is
 * deleted again, last first, and the sentence and rollback object say what was left.
 */

/** `error.thread_rollback` (publishing-api.md "Thread rollback object"). */
export interface ThreadRollbackReport {
  platform: string;
  published: number;
  rolled_back: string[];
  still_live: Array<{ thread_order: number; platform_post_id: string; platform_post_url: string | null }>;
  rollback_supported: boolean;
  quota_refunded: boolean;
}

/**
 * Patch id: the rollback also looks for the part the thread stopped at, whose send may have gone out unanswered (its
 * mark open), and deletes it when found (`lookForUnconfirmedPart`); one it cannot tell about keeps the thread from a
 * retry. Runs recorded before it deleted only the parts confirmed.
 */
const ROLLBACK_LOOKS_FOR_UNCONFIRMED = 'thread-rollback-looks-for-unconfirmed';

export interface PublishedPart {
  postId: string;
  threadOrder: number;
  platformPostId: string;
  url: string | null;
  urlUnread?: boolean;
}

export type Failure = Extract<PartAttempt, { ok: false }> & { threadOrder: number };

/**
 * The compensation: each published part (registered only once it went out) is deleted in reverse order. A refusal
 * or a failing activity leaves that part live and is logged; it never hides the refusal that started the rollback.
 * First, the part the thread stopped at (`failure`) is looked for, since its send may have gone out unanswered: found,
 * it is deleted (or listed live) as a published part; `unconfirmed` is its `thread_order` when that cannot be told,
 * `settled` true when the look could tell (found, or not there). `deferLook`: the look is not made (the thread's
 * first part, its own look stopped by a credential being renewed, waits for the renewal with its mark open).
 */
export async function rollBack(
  steps: Steps,
  claim: Extract<ThreadClaim, { kind: 'publish' }>,
  published: PublishedPart[],
  failure: Failure,
  deferLook = false,
): Promise<{ report: ThreadRollbackReport; unconfirmed: number | null; settled: boolean }> {
  const report: ThreadRollbackReport = {
    platform: claim.platform,
    published: published.length,
    rolled_back: [],
    still_live: [],
    rollback_supported: claim.rollbackSupported,
    quota_refunded: true,
  };
  const liveParts: PublishedPart[] = [];
  let unconfirmed: number | null = null;
  let settled = false;
  const stopped = claim.parts.find((part) => part.threadOrder === failure.threadOrder);
  // A part never attempted (the thread no longer publishing) has nothing to look for.
  if (stopped && !deferLook && failure.kind !== 'not_publishing' && patched(ROLLBACK_LOOKS_FOR_UNCONFIRMED)) {
    const previous = published[published.length - 1];
    const replyTo = previous ? { platformPostId: previous.platformPostId, rootPlatformPostId: published[0]!.platformPostId } : null;
    let found: UnconfirmedPart = { kind: 'unknown' };
    try {
      found = await steps.compensation.lookForUnconfirmedPart({ postId: stopped.postId, replyTo, rollbackSupported: claim.rollbackSupported });
    } catch (err) {
      log.warn('could not look for a thread part whose send was not confirmed', { postId: stopped.postId, error: String(err) });
    }
    settled = found.kind !== 'unknown';
    if (found.kind === 'unknown') unconfirmed = stopped.threadOrder;
    else if (found.kind !== 'absent') {
      report.published += 1;
      if (found.kind === 'removed') report.rolled_back.push(found.platformPostId);
      else liveParts.push({ postId: stopped.postId, threadOrder: stopped.threadOrder, platformPostId: found.platformPostId, url: found.url });
    }
  }
  for (const part of [...published].reverse()) {
    let removal: PartRemoval = 'refused';
    if (claim.rollbackSupported) {
      try {
        removal = await steps.compensation.removeThreadPart({ postId: part.postId, platformPostId: part.platformPostId });
      } catch (err) {
        log.warn('could not delete a thread part during rollback', { postId: part.postId, error: String(err) });
      }
    }
    if (removal === 'removed') report.rolled_back.push(part.platformPostId);
    else liveParts.push(part);
  }
  report.still_live = liveParts
    .sort((a, b) => a.threadOrder - b.threadOrder)
    .map((p) => ({ thread_order: p.threadOrder, platform_post_id: p.platformPostId, platform_post_url: p.url }));
  return { report, unconfirmed, settled };
}

/**
 * The refusal, which part it hit, and what the rollback left behind: `unconfirmed`, a part that may be live though
 * nobody could tell (said once: an unknown outcome's refusal says it already).
 */
export function failureMessage(claim: Extract<ThreadClaim, { kind: 'publish' }>, failure: Failure, rollback: ThreadRollbackReport, unconfirmed: number | null = null): string {
  const told = `${failure.message.replace(/\.$/, '')} (part ${failure.threadOrder} of ${claim.parts.length}).`;
  const refusal =
    unconfirmed === null || failure.kind === 'unknown_outcome'
      ? told
      : `${told} Part ${unconfirmed} may have been published: ${claim.platformName} did not confirm it and Herald could not look for it; check the account before sending the thread again.`;
  if (rollback.still_live.length === 0) {
    if (rollback.published === 0) return unconfirmed === null ? `${refusal} Nothing was published.` : refusal;
    return `${refusal} The ${rollback.published} published part${rollback.published === 1 ? ' was' : 's were'} deleted again.`;
  }
  const parts = rollback.still_live.map((p) => p.thread_order).join(', ');
  const why = rollback.rollback_supported ? 'could not be deleted' : 'cannot be deleted through the API for this account';
  return `${refusal} Part${rollback.still_live.length === 1 ? '' : 's'} ${parts} ${rollback.still_live.length === 1 ? 'is' : 'are'} still live and ${why}; delete ${rollback.still_live.length === 1 ? 'it' : 'them'} on the platform before sending the thread again.`;
}
