import { status } from '@grpc/grpc-js';
import { InternalConnectionLikeSymbol, isGrpcServiceError, ServiceError, WorkflowNotFoundError, type Client, type InternalConnectionLike, type WorkflowHandle } from '@temporalio/client';
import type { PublishGroupInput } from '../../workflows/publish-group';
import type { PublishPostInput } from '../../workflows/publish-post';
import { searchAttributesOf, workflowSearchAttributes, type SearchedPost } from '../temporal/search-attributes';
import type { PostsRuntime } from './runtime';

/**
 * How the API and the reconciler talk to post workflows: one `publishPost` per post, workflow id `post-<postId>`.
 * The database row is the truth; a signal only makes a waiting workflow read it again now rather than at its timer.
 */

/**
 * A start refused as invalid: the request itself is wrong for this cluster (search attributes beyond its limits,
 * or not registered), not the cluster unreachable or busy; it fails the same way every time it is sent.
 */
export function refusedAsInvalid(err: unknown): err is ServiceError {
  return err instanceof ServiceError && isGrpcServiceError(err.cause) && err.cause.code === status.INVALID_ARGUMENT;
}

export const postWorkflowId = (postId: string) => `post-${postId}`;
/** The one workflow of an immediate fan-out (`workflows/publish-group.ts`), recorded in its rows' `workflow_id`. */
export const groupWorkflowId = (groupId: string) => `group-${groupId}`;

/** Signal names of `workflows/publish-post.ts` (kept as strings so this side never loads workflow code). */
const postSignals = { reschedule: 'reschedulePost', edit: 'postEdited', cancel: 'cancelPost' } as const;

function publishInput(rt: PostsRuntime, postId: string, immediate = false, scheduledAt?: Date | null): PublishPostInput {
  return {
    postId,
    immediate,
    scheduledRetryDelaysMs: [...rt.scheduledRetryDelaysMs],
    immediateRetryDelaysMs: [...rt.immediateRetryDelaysMs],
    dueLeadMs: rt.dueLeadMs,
    ...(scheduledAt ? { scheduledAt: scheduledAt.getTime() } : {}),
  };
}

function client(rt: PostsRuntime) {
  if (!rt.temporal) throw new Error('Temporal client is not configured');
  return rt.temporal;
}

/**
 * Eager start hands the first workflow task straight back to this process's worker in the start response (no trip
 * through the task queue). The SDK allows it only on a client built on the worker's NativeConnection, and the server
 * falls back to the queue when the worker has no free slot.
 */
export function canStartEagerly(temporal: Client): boolean {
  return (temporal.connection as InternalConnectionLike)[InternalConnectionLikeSymbol]?.supportsEagerStart === true;
}

/** A post's row as its workflow's start needs it: its search attributes, and its time if it is scheduled. */
export type StartedPost = SearchedPost & { scheduled_at?: Date | null };

/**
 * Starts the post's workflow; when one with this id is already running it is used as is (the reconciler and the
 * API may both ask), so a post never gets two. An immediate post, whose request waits, starts eagerly where it can.
 * `post`: its row when the caller holds it (the API just wrote it), so its search attributes need no read, and a
 * scheduled post's workflow waits for the time written without reading the row first.
 */
export async function startPublishWorkflow(
  rt: PostsRuntime,
  postId: string,
  options: { immediate?: boolean; post?: StartedPost } = {},
): Promise<WorkflowHandle> {
  const temporal = client(rt);
  const handle = await temporal.workflow.start('publishPost', {
    workflowId: postWorkflowId(postId),
    taskQueue: rt.taskQueue,
    args: [publishInput(rt, postId, options.immediate, options.post?.scheduled_at)],
    typedSearchAttributes: options.post ? searchAttributesOf([options.post]) : await workflowSearchAttributes(rt.db, { postIds: [postId] }),
    workflowIdConflictPolicy: 'USE_EXISTING',
    requestEagerStart: options.immediate === true && canStartEagerly(temporal),
  });
  rt.recentlyRunning?.record(handle.workflowId);
  return handle;
}

/**
 * Starts the workflow that publishes an immediate fan-out's posts together (same reuse rule as a post's). The
 * reconciler restarts it with the posts still `publishing` (`takenOver`): each post is claimed first, so it waits for
 * a call of the lost run that may still be on its way, then its attempt looks before it sends again.
 */
export async function startGroupWorkflow(
  rt: PostsRuntime,
  groupId: string,
  postIds: readonly string[],
  posts?: readonly SearchedPost[],
  options: { takenOver?: boolean } = {},
): Promise<WorkflowHandle> {
  const temporal = client(rt);
  const input: PublishGroupInput = { groupId, postIds: [...postIds], immediateRetryDelaysMs: [...rt.immediateRetryDelaysMs], ...(options.takenOver ? { takenOver: true } : {}) };
  const handle = await temporal.workflow.start('publishGroup', {
    workflowId: groupWorkflowId(groupId),
    taskQueue: rt.taskQueue,
    args: [input],
    typedSearchAttributes: posts ? searchAttributesOf(posts) : await workflowSearchAttributes(rt.db, { postIds }),
    workflowIdConflictPolicy: 'USE_EXISTING',
    requestEagerStart: canStartEagerly(temporal),
  });
  rt.recentlyRunning?.record(handle.workflowId);
  return handle;
}

/** The workflow that sends a published post's first comment its own run left (`workflows/first-comment.ts`). */
export const firstCommentWorkflowId = (postId: string) => `first-comment-${postId}`;

/** Starts `sendPendingFirstComment` for a post (same reuse rule as a post's: a running one is used as is). */
export async function startFirstCommentWorkflow(rt: PostsRuntime, postId: string): Promise<WorkflowHandle> {
  const handle = await client(rt).workflow.start('sendPendingFirstComment', {
    workflowId: firstCommentWorkflowId(postId),
    taskQueue: rt.taskQueue,
    args: [{ postId }],
    typedSearchAttributes: await workflowSearchAttributes(rt.db, { postIds: [postId] }),
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
  rt.recentlyRunning?.record(handle.workflowId);
  return handle;
}

/** Best effort: a workflow that is gone needs no wake-up (its next read of the row would end it anyway). */
export async function signalPost(rt: PostsRuntime, postId: string, signal: keyof typeof postSignals, arg?: string | null): Promise<void> {
  if (!rt.temporal) return;
  try {
    const handle = rt.temporal.workflow.getHandle(postWorkflowId(postId));
    await (arg === undefined ? handle.signal(postSignals[signal]) : handle.signal(postSignals[signal], arg));
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return;
    rt.logger.warn({ err, postId, signal }, 'could not signal a post workflow');
  }
}
