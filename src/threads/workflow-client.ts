import { WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import type { PublishThreadInput } from '../../workflows/publish-thread';
import type { PostsRuntime } from '../posts/runtime';
import { canStartEagerly } from '../posts/workflow-client';
import { searchAttributesOf, workflowSearchAttributes, type SearchedPost } from '../temporal/search-attributes';

/**
 * How the API and the reconciler talk to thread workflows: one `publishThread` per thread, workflow id
 * `thread-<threadId>`. The rows are the truth; the signal only makes a waiting workflow read them again now.
 */

export const threadWorkflowId = (threadId: string) => `thread-${threadId}`;

/** Signal name of `workflows/publish-thread.ts` (a string, so this side never loads workflow code). */
const threadChangedSignal = 'threadChanged';

/** What the API knows of a thread it has just written, so that its workflow's start reads nothing. */
interface StartedThread {
  /** The shared time written: the workflow waits for it without a first read. */
  scheduledAt?: Date | null;
  /** Its request waits for the outcome: the workflow's steps run in the worker that holds it, started eagerly. */
  immediate?: boolean;
  /** Its rows, for the workflow's search attributes. */
  rows?: readonly SearchedPost[];
}

function publishThreadInput(rt: PostsRuntime, threadId: string, started: StartedThread): PublishThreadInput {
  return {
    threadId,
    scheduledRetryDelaysMs: [...rt.scheduledRetryDelaysMs],
    partRetryDelaysMs: [...rt.immediateRetryDelaysMs],
    dueLeadMs: rt.dueLeadMs,
    ...(started.scheduledAt ? { scheduledAt: started.scheduledAt.getTime() } : {}),
    ...(started.immediate ? { immediate: true } : {}),
  };
}

function client(rt: PostsRuntime) {
  if (!rt.temporal) throw new Error('Temporal client is not configured');
  return rt.temporal;
}

/**
 * Starts the thread's workflow, or uses the one already running with this id (a thread never gets two). `started`:
 * what the caller has just written (the API); the reconciler, which holds no rows, gives nothing.
 */
export async function startThreadWorkflow(rt: PostsRuntime, threadId: string, started: StartedThread = {}): Promise<WorkflowHandle> {
  const temporal = client(rt);
  const handle = await temporal.workflow.start('publishThread', {
    workflowId: threadWorkflowId(threadId),
    taskQueue: rt.taskQueue,
    args: [publishThreadInput(rt, threadId, started)],
    typedSearchAttributes: started.rows ? searchAttributesOf(started.rows) : await workflowSearchAttributes(rt.db, { threadId }),
    workflowIdConflictPolicy: 'USE_EXISTING',
    requestEagerStart: started.immediate === true && canStartEagerly(temporal),
  });
  rt.recentlyRunning?.record(handle.workflowId);
  return handle;
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
