import { WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import type { PublishThreadInput, PublishThreadResult } from '../../workflows/publish-thread';
import type { PostsRuntime } from '../posts/runtime';
import { workflowSearchAttributes } from '../temporal/search-attributes';

/**
 * How the API and the reconciler talk to thread workflows: one `publishThread` per thread, workflow id
 * `thread-<threadId>`. The rows are the truth; the signal only makes a waiting workflow read them again now.
 */

export const threadWorkflowId = (threadId: string) => `thread-${threadId}`;

/** Signal name of `workflows/publish-thread.ts` (a string, so this side never loads workflow code). */
const threadChangedSignal = 'threadChanged';

function publishThreadInput(rt: PostsRuntime, threadId: string, scheduledAt?: Date | null): PublishThreadInput {
  return {
    threadId,
    scheduledRetryDelaysMs: [...rt.scheduledRetryDelaysMs],
    partRetryDelaysMs: [...rt.immediateRetryDelaysMs],
    dueLeadMs: rt.dueLeadMs,
    ...(scheduledAt ? { scheduledAt: scheduledAt.getTime() } : {}),
  };
}

function client(rt: PostsRuntime) {
  if (!rt.temporal) throw new Error('Temporal client is not configured');
  return rt.temporal;
}

/**
 * Starts the thread's workflow, or uses the one already running with this id (a thread never gets two).
 * `scheduledAt`: the shared time the caller has just written (the API), so the workflow waits for it without a read.
 */
export async function startThreadWorkflow(rt: PostsRuntime, threadId: string, scheduledAt?: Date | null): Promise<WorkflowHandle> {
  const handle = await client(rt).workflow.start('publishThread', {
    workflowId: threadWorkflowId(threadId),
    taskQueue: rt.taskQueue,
    args: [publishThreadInput(rt, threadId, scheduledAt)],
    typedSearchAttributes: await workflowSearchAttributes(rt.db, { threadId }),
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
  rt.recentStarts?.record(handle.workflowId);
  return handle;
}

export async function awaitThreadResult(handle: WorkflowHandle): Promise<PublishThreadResult> {
  return (await handle.result()) as PublishThreadResult;
}

/** Best effort: a workflow that is gone needs no wake-up. */
export async function signalThread(rt: Pick<PostsRuntime, 'temporal' | 'logger'>, threadId: string): Promise<void> {
  if (!rt.temporal) return;
  try {
    await rt.temporal.workflow.getHandle(threadWorkflowId(threadId)).signal(threadChangedSignal);
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return;
    rt.logger.warn({ err, threadId }, 'could not signal a thread workflow');
  }
}
