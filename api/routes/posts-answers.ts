import { ApiError } from '../../src/errors';
import type { FirstCommentRetry } from '../../src/posts/first-comment';
import type { PostDeletion } from '../../src/posts/manage';
import type { FanOut, PlatformRefusal, UpdateOutcome } from '../../src/posts/outcomes';
import type { PublishOutcome } from '../../src/posts/respond';
import type { ThreadCreateOutcome } from '../../src/threads/respond';
import type { RouteResult } from '../route';

/**
 * The one place the outcomes of the posts and threads services become HTTP answers (publishing-api.md "Responses"):
 * a single post or thread created → 201; a fan-out → 201 when every account succeeded, else 207; a platform's
 * refusal → its error (502 `upstream_error`, `thread_rollback_incomplete` with `thread_rollback`); a first comment
 * the platform refused → 502 `first_comment_failed` or 429 `first_comment_rate_limited` with `Retry-After`.
 */

function refusalError(refusal: PlatformRefusal): ApiError {
  return new ApiError(refusal.code, refusal.message, refusal.details ?? {});
}

function fanOutAnswer(outcome: FanOut<{ success: boolean }>): RouteResult {
  return { status: outcome.results.every((r) => r.success) ? 201 : 207, body: { data: { group_id: outcome.groupId, results: outcome.results } } };
}

export function createdPostAnswer(outcome: PublishOutcome): RouteResult {
  if (outcome.kind === 'platform_refused') throw refusalError(outcome);
  if (outcome.kind === 'fan_out') return fanOutAnswer(outcome);
  return { status: 201, body: { data: outcome.post } };
}

export function createdThreadAnswer(outcome: ThreadCreateOutcome): RouteResult {
  if (outcome.kind === 'platform_refused') throw refusalError(outcome);
  if (outcome.kind === 'fan_out') return fanOutAnswer(outcome);
  return { status: 201, body: { data: { thread_id: outcome.threadId, posts: outcome.posts } } };
}

export function updatedPostAnswer(outcome: UpdateOutcome): RouteResult {
  if (outcome.kind === 'platform_refused') throw refusalError(outcome);
  return { status: 200, body: { data: outcome.post } };
}

export function deletedPostAnswer(outcome: PostDeletion | PlatformRefusal): RouteResult {
  if (outcome.kind === 'platform_refused') throw refusalError(outcome);
  const { kind: _kind, id, ...ids } = outcome;
  return { status: 200, body: { data: { id, deleted: true, ...ids } } };
}

export function firstCommentAnswer(outcome: FirstCommentRetry): RouteResult {
  if (outcome.kind === 'posted') return { status: 200, body: { data: outcome.post } };
  if (outcome.rateLimited) {
    const headers: Record<string, string> = outcome.retryAfterSeconds ? { 'Retry-After': String(Math.ceil(outcome.retryAfterSeconds)) } : {};
    throw new ApiError('first_comment_rate_limited', `${outcome.message} The post is unaffected; retry the first comment later.`, {}, headers);
  }
  throw new ApiError('first_comment_failed', outcome.message);
}
