import type { AccountRow } from '../db/tables/accounts';
import { ApiError } from '../errors';
import { platformName } from '../platforms/availability';
import { UnstartableStart, unstartableSentence } from '../posts/await-settled';
import { platformRefusal, type FanOut, type PlatformRefusal } from '../posts/outcomes';
import type { PostView } from '../posts/post-view';
import { loadPostViews } from '../posts/view-queries';
import type { WarningEntry } from '../posts/rules';
import type { PostsRuntime } from '../posts/runtime';
import type { PublishThreadResult } from '../../workflows/publish-thread';
import { recordedThreadFailure } from './reads';

export interface CreatedThread {
  threadId: string;
  userId: string;
  account: Pick<AccountRow, 'id' | 'platform'>;
  postIds: string[];
}

/** A thread that did not go out: failed (its workflow's result), or its workflow refused by Temporal in a fan-out (`unstarted`). */
export type ThreadOutcome = Extract<PublishThreadResult, { outcome: 'failed' }> | { outcome: 'unstarted'; message: string };

/** One account's failure: the platform's refusal, or Herald's own (`internal_error`, a workflow Temporal refused to start). */
type ThreadFailure = PlatformRefusal | { kind: 'unstarted'; code: 'internal_error'; message: string; details?: undefined };

/** One account's result in a thread fan-out: `thread_id` and `posts` instead of `post`. */
interface ThreadResult {
  account_id: string;
  platform: string;
  success: boolean;
  post_id: string | null;
  platform_post_url: string | null;
  status: PostView['status'] | null;
  thread_id: string | null;
  posts: PostView[] | null;
  /** As the error envelope would carry it: `code`, `message`, and `thread_rollback` where there is one. */
  error: ({ code: ThreadFailure['code']; message: string } & Record<string, unknown>) | null;
}

/** A thread create: the thread (one account), its refusal (rows gone, nothing kept), or a fan-out. */
export type ThreadCreateOutcome = { kind: 'created'; threadId: string; posts: PostView[] } | PlatformRefusal | FanOut<ThreadResult>;

/** A failed thread: `upstream_error`, or `thread_rollback_incomplete` when parts are still live; both carry `thread_rollback`. */
function refusalOfThread(outcome: Extract<ThreadOutcome, { outcome: 'failed' }>): PlatformRefusal {
  return platformRefusal(outcome.message, outcome.code, { thread_rollback: outcome.rollback });
}

function failureOf(outcome: ThreadOutcome): ThreadFailure {
  return outcome.outcome === 'unstarted' ? { kind: 'unstarted', code: 'internal_error', message: outcome.message } : refusalOfThread(outcome);
}

/**
 * The outcome of a thread create, from the rows once the workflows answered (decisions.md "Threads"): one account →
 * the thread (parts in `thread_order`) or its refusal; `account_ids` → one result per account in the order named,
 * a success when the thread went out (or was saved). Draft parts carry their account's `warnings`.
 */
export async function threadOutcome(
  rt: Pick<PostsRuntime, 'db'>,
  input: { created: readonly CreatedThread[]; outcomes: ReadonlyMap<string, ThreadOutcome>; fanOut: boolean; groupId: string | null; draft: boolean; warnings: readonly WarningEntry[] },
): Promise<ThreadCreateOutcome> {
  const views = await loadPostViews(rt.db, input.created.flatMap((t) => t.postIds));
  const results = await Promise.all(
    input.created.map(async (thread) => {
      const posts = views
        .filter((v) => v.thread_id === thread.threadId)
        .map((v): PostView => (input.draft ? { ...v, warnings: input.warnings.filter((w) => w.account_id === thread.account.id) } : v));
      const outcome = input.outcomes.get(thread.threadId);
      const failure: ThreadFailure | undefined = outcome ? failureOf(outcome) : posts.length === 0 ? await lostOutcome(rt, thread) : failedRows(posts);
      return { thread, posts, failure };
    }),
  );
  // Read from the rows (a takeover's answer): every start refused was the first request's 500 (`fanOutStarts`).
  if (input.fanOut && results.every(({ failure }) => failure?.kind === 'unstarted')) {
    throw new UnstartableStart(
      results.flatMap(({ thread }) => thread.postIds),
      results.flatMap(({ posts }) => posts.map((post) => post.id)),
    );
  }

  if (!input.fanOut) {
    const { thread, posts, failure } = results[0]!;
    // A lone thread's refused start is the request's 500 (`fanOutStarts`); never an outcome here.
    if (failure?.kind === 'unstarted') throw new ApiError('internal_error', failure.message);
    return failure ?? { kind: 'created', threadId: thread.threadId, posts };
  }
  const shaped = results.map(({ thread, posts, failure }): ThreadResult => {
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
      error: failure ? { code: failure.code, message: failure.message, ...failure.details } : null,
    };
  });
  return { kind: 'fan_out', groupId: input.groupId, results: shaped };
}

/**
 * Rows gone without a readable workflow result: the thread failed and was discarded. Its `thread.failed` event says
 * how (the sentence, and `thread_rollback`, whose `still_live` makes it `thread_rollback_incomplete`); without one,
 * only that nothing was kept.
 */
async function lostOutcome(rt: Pick<PostsRuntime, 'db'>, thread: CreatedThread): Promise<ThreadFailure> {
  const recorded = await recordedThreadFailure(rt.db, thread.userId, thread.threadId);
  if (recorded?.message === unstartableSentence) return unstartedFailure(thread.postIds, []);
  const rollback = recorded?.rollback as Extract<ThreadOutcome, { outcome: 'failed' }>['rollback'] | null | undefined;
  if (!recorded?.message || !rollback) return platformRefusal(`${platformName(thread.account.platform)} did not take the thread; nothing of it was kept`);
  return refusalOfThread({ outcome: 'failed', code: rollback.still_live.length > 0 ? 'thread_rollback_incomplete' : 'upstream_error', message: recorded.message, rollback });
}

/** A thread whose rows say it failed (when the workflow result could not be read, or a takeover's answer). */
function failedRows(posts: readonly PostView[]): ThreadFailure | undefined {
  const failed = posts.find((p) => p.status === 'failed');
  if (!failed) return undefined;
  if (posts.every((p) => p.error_message === unstartableSentence)) return unstartedFailure(posts.map((p) => p.id), posts.map((p) => p.id));
  return platformRefusal(failed.error_message ?? 'The platform refused the thread');
}

/**
 * A thread whose start Temporal refused (`unstartableSentence`, written by no other failure), read from its rows or its
 * `thread.failed` event: Herald's `internal_error` with the sentence the first request gave (`UnstartableStart`), not
 * a platform's `upstream_error`.
 */
function unstartedFailure(postIds: readonly string[], kept: readonly string[]): ThreadFailure {
  return { kind: 'unstarted', code: 'internal_error', message: new UnstartableStart(postIds, kept).message };
}
