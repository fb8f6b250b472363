import { WithStartWorkflowOperation, type Client } from '@temporalio/client';
import type { Logger } from '../logger';
import type { SyncCommentsInput } from '../../workflows/sync-comments';

/**
 * How listings reach a post's comment-sync workflow (`workflows/sync-comments.ts`), workflow id `comments-<postId>`.
 * Both calls start it when it is not running (a lost or ended workflow is simply started again by the next listing,
 * so no reconciler is needed). Names are strings so this side never loads workflow code.
 */

export const commentSyncWorkflowId = (postId: string) => `comments-${postId}`;

interface CommentSyncClient {
  temporal?: Client;
  taskQueue: string;
  logger: Logger;
}

/** `sync=true` waits this long for the refresh it asked for, then answers from the snapshot as it stands. */
const SYNC_TRUE_WAIT_MS = 10_000;

function startOptions(rt: CommentSyncClient, postId: string) {
  const input: SyncCommentsInput = { postId };
  return { workflowId: commentSyncWorkflowId(postId), taskQueue: rt.taskQueue, args: [input] as [SyncCommentsInput], workflowIdConflictPolicy: 'USE_EXISTING' as const };
}

/** `sync=auto` found the window passed: the refresh runs behind the answer. Best effort; a listing never fails for it. */
export async function requestRefresh(rt: CommentSyncClient, postId: string): Promise<void> {
  if (!rt.temporal) return;
  try {
    await rt.temporal.workflow.signalWithStart('syncComments', { ...startOptions(rt, postId), signal: 'commentsListed', signalArgs: [] });
  } catch (err) {
    rt.logger.warn({ err, postId }, 'could not ask for a comment refresh');
  }
}

/**
 * `sync=true`: asks for a refresh and waits for it (at most `waitMs`). Resolves true when it was decided in time
 * (ran, skipped or refused: the sync state says which), false when the wait ran out or Temporal could not be reached.
 */
export async function refreshAndWait(rt: CommentSyncClient, postId: string, waitMs = SYNC_TRUE_WAIT_MS): Promise<boolean> {
  if (!rt.temporal) return false;
  const startWorkflowOperation = new WithStartWorkflowOperation('syncComments', startOptions(rt, postId));
  const update = rt.temporal.workflow.executeUpdateWithStart('refreshCommentsNow', { startWorkflowOperation }).then(
    () => true,
    (err) => {
      rt.logger.warn({ err, postId }, 'comment refresh request failed');
      return false;
    },
  );
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), waitMs)));
  try {
    return await Promise.race([update, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
