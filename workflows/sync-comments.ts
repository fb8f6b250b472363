import { ActivityFailure, allHandlersFinished, condition, continueAsNew, defineSignal, defineUpdate, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
// Only the activity types: workflow code never loads activity code.
import type { CommentSyncActivities } from '../activities/comments-sync';

/**
 * Keeps one published post's stored comments fresh (decisions.md "Comments"). Workflow id `comments-<postId>`.
 * Started by the first listing that needs a refresh (signal-with-start or update-with-start), never at publish time.
 *
 *   listing, window passed (`commentsListed`) ──┐
 *   listing with sync=true (`refreshCommentsNow`, waits) ──┼──▶ refresh if due ──▶ wait for the next request, or the
 *   background timer (the `auto` window) ──┘                                    `auto` window while the post is read
 *
 * Refreshes run one at a time; whether one is due (windows, backoff) and what it may spend is decided by the activity
 * from the post's sync state, so a request that arrives inside the window costs nothing. When nobody has listed the
 * post for 30 minutes and no request waits, the workflow ends; the next listing starts it again.
 */

export interface SyncCommentsInput {
  postId: string;
  /** Carried by continue-as-new: when the background refresh is due (workflow time, ms), or null. */
  nextBackgroundAt?: number | null;
  /** History length after which the workflow continues as new between refreshes (default 1,000; tests make it small). */
  historyLimit?: number;
}

type SyncCommentsResult = { outcome: 'idle' | 'stopped' };

const HISTORY_LIMIT = 1_000;
/** An activity that failed outright (database unreachable...) is tried again after this, if the post is still read. */
const AFTER_ACTIVITY_FAILURE_MS = 60_000;
const IDLE_GRACE_MS = 1_000;

const commentsListed = defineSignal('commentsListed');
const refreshCommentsNow = defineUpdate<{ ran: boolean }>('refreshCommentsNow');

// Reaches a platform and spends allowances: the workflow decides about repeats itself (the sync state's backoff). It
// heartbeats before each page; the post's refresh claim keeps a refresh given up on from running beside the next.
const sync = proxyActivities<CommentSyncActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '2 minutes',
  retry: { maximumAttempts: 1 },
});

export async function syncComments(input: SyncCommentsInput): Promise<SyncCommentsResult> {
  let autoRequested = false;
  // `sync=true` requests are numbered; each waits until a refresh that began after it has been decided.
  let requested = 0;
  let served = 0;
  let lastRan = false;
  setHandler(commentsListed, () => void (autoRequested = true));
  setHandler(refreshCommentsNow, async () => {
    const ticket = ++requested;
    await condition(() => served >= ticket);
    return { ran: lastRan };
  });

  let nextBackgroundAt = input.nextBackgroundAt ?? null;
  const waiting = () => requested > served || autoRequested;
  let outcome: SyncCommentsResult['outcome'] = 'idle';
  for (;;) {
    if (!waiting()) {
      // Requests delivered with the start (signal- or update-with-start) reach their handlers only after this code
      // first yields; the short wait also lets a request racing the end be served rather than left unanswered.
      if (nextBackgroundAt === null && !(await condition(waiting, IDLE_GRACE_MS))) break;
    }
    if (!waiting() && nextBackgroundAt !== null) {
      if (workflowInfo().historyLength > (input.historyLimit ?? HISTORY_LIMIT)) {
        await condition(allHandlersFinished);
        await continueAsNew<typeof syncComments>({ ...input, nextBackgroundAt });
      }
      await condition(waiting, Math.max(1, nextBackgroundAt - Date.now()));
    }
    const ticket = requested;
    const mode = requested > served ? 'true' : autoRequested ? 'auto' : 'background';
    autoRequested = false;
    try {
      const result = await sync.refreshCommentsIfDue({ postId: input.postId, mode, now: Date.now() });
      lastRan = result.kind === 'checked' && result.ran;
      served = ticket;
      if (result.kind === 'stop') {
        outcome = 'stopped';
        served = requested;
        break;
      }
      nextBackgroundAt = result.nextBackgroundAt;
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      lastRan = false;
      served = ticket;
      nextBackgroundAt = Date.now() + AFTER_ACTIVITY_FAILURE_MS;
    }
  }
  await condition(allHandlersFinished);
  return { outcome };
}
