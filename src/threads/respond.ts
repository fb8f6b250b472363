import type { AccountRow } from '../db/tables/accounts';
import { ApiError } from '../errors';
import { platformName } from '../platforms/availability';
import type { PostView } from '../posts/post-view';
import { loadPostViews } from '../posts/repository';
import type { WarningEntry } from '../posts/rules';
import type { RouteResult } from '../posts/route-result';
import type { PostsRuntime } from '../posts/runtime';
import type { PublishThreadResult } from '../../workflows/publish-thread';

export interface CreatedThread {
  threadId: string;
  account: Pick<AccountRow, 'id' | 'platform'>;
  postIds: string[];
}

export type ThreadOutcome = Extract<PublishThreadResult, { outcome: 'failed' }>;

/** The error a failed thread answers with: `upstream_error`, or `thread_rollback_incomplete` when parts are still live; both carry `thread_rollback`. */
export function threadFailureError(outcome: ThreadOutcome): ApiError {
  return new ApiError(outcome.code, outcome.message, { thread_rollback: outcome.rollback });
}

/**
 * The answer to a thread create, from the rows once the workflows answered (decisions.md "Threads"): one account →
 * 201 `{ data: { thread_id, posts } }` (parts in `thread_order`), or the thread's failure (rows gone, nothing kept);
 * `account_ids` → 201 when every thread went out (or was saved), 207 otherwise, one result per account in the order
 * named, each with `thread_id` and `posts` instead of `post`. Draft parts carry their account's `warnings`.
 */
export async function threadOutcomeResponse(
  rt: Pick<PostsRuntime, 'db'>,
  input: { created: readonly CreatedThread[]; outcomes: ReadonlyMap<string, ThreadOutcome>; fanOut: boolean; groupId: string | null; draft: boolean; warnings: readonly WarningEntry[] },
): Promise<RouteResult> {
  const views = await loadPostViews(rt.db, input.created.flatMap((t) => t.postIds));
  const results = input.created.map((thread) => {
    const posts = views
      .filter((v) => v.thread_id === thread.threadId)
      .map((v): PostView => (input.draft ? { ...v, warnings: input.warnings.filter((w) => w.account_id === thread.account.id) } : v));
    const failure = input.outcomes.get(thread.threadId) ?? (posts.length === 0 ? lostOutcome(thread) : undefined) ?? failedRows(posts);
    return { thread, posts, failure };
  });

  if (!input.fanOut) {
    const { thread, posts, failure } = results[0]!;
    if (failure) throw failure instanceof ApiError ? failure : threadFailureError(failure);
    return { status: 201, body: { data: { thread_id: thread.threadId, posts } } };
  }
  const shaped = results.map(({ thread, posts, failure }) => {
    const error = failure ? (failure instanceof ApiError ? failure : threadFailureError(failure)).toEnvelope().error : null;
    const first = failure ? undefined : posts[0];
    return {
      account_id: thread.account.id,
      platform: thread.account.platform,
      success: !failure,
      post_id: first?.id ?? null,
      platform_post_url: first?.platform_post_url ?? null,
      status: first?.status ?? null,
      thread_id: failure ? null : thread.threadId,
      posts: failure ? null : posts,
      error,
    };
  });
  return { status: shaped.every((r) => r.success) ? 201 : 207, body: { data: { group_id: input.groupId, results: shaped } } };
}

/** Rows gone without a readable workflow result: the thread failed and was removed; its details were not recorded. */
function lostOutcome(thread: CreatedThread): ApiError {
  return new ApiError('upstream_error', `${platformName(thread.account.platform)} did not take the thread; nothing of it was kept`);
}

/** A thread whose rows say it failed (only when the workflow result could not be read). */
function failedRows(posts: readonly PostView[]): ApiError | undefined {
  const failed = posts.find((p) => p.status === 'failed');
  return failed ? new ApiError('upstream_error', failed.error_message ?? 'The platform refused the thread') : undefined;
}
