import type { WorkflowHandle } from '@temporalio/client';
import type { PostView } from './post-view';
import { statusOf } from './view-queries';
import { ApiError } from '../errors';
import { refusedAsInvalid } from './workflow-client';
import type { PostsRuntime } from './runtime';

/**
 * How a request that publishes now waits for its posts (`createPosts`, `createThreads`): the change feed first, the
 * workflow's result as the fallback.
 */

/**
 * The workflow's result is asked for only when the change feed cannot be relied on, or after this long: a long poll
 * of the workflow's history per publish costs both processes a gRPC call (and the server an encoded history) that
 * the feed's NOTIFY makes redundant. A workflow that ends without settling its rows is still heard of, this much later.
 */
const resultFallbackMs = 5_000;

/**
 * What a request learnt while it waited: the workflow's `result` when that answered; otherwise the rows say the
 * outcome, and `views` are those rows (in the order asked) when this process's worker recorded every one of them and
 * said so with their views (`PostChangeFeed.recording`), so the answer needs no read.
 */
interface PublishAwaited {
  result?: unknown;
  views?: PostView[];
}

/**
 * Starts the workflow that publishes `postIds` and, when the request waits for the platform's verdict, returns once
 * every one of them settled: the change feed reports each row as its change commits; the workflow's result is asked
 * for when the feed reports a row removed (an immediate thread that failed keeps no rows: only its result says why),
 * when the feed is in doubt, or when it has not answered within `resultFallbackMs`. A start that fails is left to the
 * reconciler (the rows say what they need), unless Temporal refused it as invalid: then it would be refused again
 * every time, so the posts are failed (`failUnstarted`, quota returned; it returns the rows it kept) and
 * `UnstartableStart` is thrown: the request's 500, or one account's result in a fan-out whose other starts went through.
 */
export async function startAndAwait(
  rt: PostsRuntime,
  postIds: readonly string[],
  start: () => Promise<WorkflowHandle>,
  awaitResults: boolean,
  failUnstarted: (sentence: string) => Promise<readonly string[]>,
): Promise<PublishAwaited> {
  const watches = awaitResults && rt.changes ? postIds.map((id) => rt.changes!.watch(id)) : [];
  // A plain timer, cleared at the end: an aborted `timers/promises` sleep built a DOMException and a rejection per
  // publish for a fallback that almost never fires.
  let fallbackTimer: NodeJS.Timeout | undefined;
  try {
    let handle: WorkflowHandle;
    try {
      handle = await start();
    } catch (err) {
      if (refusedAsInvalid(err)) return await refuseUnstartable(rt, postIds, err, failUnstarted);
      // Unreachable or busy: the rows are new, so the reconciler's next look (within a minute) starts them.
      rt.logger.error({ err, postIds }, 'could not start the publish workflow; the reconciler will start it at its next look');
      return {};
    }
    if (!awaitResults) return {};
    try {
      if (watches.length === 0) return { result: await handle.result() };
      let removed!: () => void;
      const removal = new Promise<void>((resolve) => (removed = resolve));
      // A removed row has no outcome to read: it asks for the result instead, and the rows alone never answer.
      const heard = Promise.all(
        watches.map(async (watch) => {
          if ((await watch.settled) === 'removed') {
            removed();
            // Its own promise, let go of with the request: awaiting one shared forever would keep every waiter.
            await new Promise<never>(() => undefined);
          }
        }),
      );
      const askResult = Promise.race([removal, ...watches.map((watch) => watch.inDoubt), new Promise<void>((fire) => (fallbackTimer = setTimeout(fire, resultFallbackMs)))]);
      return await Promise.race([heard.then(() => recordedViews(watches)), askResult.then(async () => ({ result: await handle.result() }))]);
    } catch (err) {
      // The workflow may still be running (a dropped connection, a server hiccup): the rows say when it is done.
      rt.logger.warn({ err, postIds }, 'could not read the publish result; watching the rows instead');
      await Promise.all(postIds.map((id) => waitWhilePublishing(rt, id)));
      return {};
    }
  } finally {
    clearTimeout(fallbackTimer);
    for (const watch of watches) watch.stop();
  }
}

/** The settled posts' views when every one of them came with its view; otherwise the answer reads the rows. */
function recordedViews(watches: ReadonlyArray<{ view: PostView | undefined }>): PublishAwaited {
  const views = watches.map((watch) => watch.view);
  return views.every((view) => view !== undefined) ? { views } : {};
}

/** Polls the row until it leaves `publishing` (bounded: 60 s), for when the workflow result cannot be read. */
async function waitWhilePublishing(rt: PostsRuntime, postId: string, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if ((await statusOf(rt.db, postId)) !== 'publishing') return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** The sentence a post Temporal refused to start keeps in `error_message`. */
export const unstartableSentence = 'Herald could not start publishing this post (its workflow was refused); nothing was sent and its quota was returned';

/**
 * The posts among `views` whose start Temporal refused (`failUnstarted` wrote `unstartableSentence`: no other write
 * does), for a takeover's answer to say what the first request said of them (`answerMadePosts`): each one's
 * `internal_error` in a fan-out, and, when it was every post, the request's 500 naming them (`UnstartableStart`,
 * thrown), not a platform's `upstream_error`.
 */
export function unstartedAmong(views: ReadonlyArray<Pick<PostView, 'id' | 'status' | 'error_message'>>): ReadonlySet<string> {
  const unstarted = views.filter((view) => view.status === 'failed' && view.error_message === unstartableSentence).map((view) => view.id);
  if (unstarted.length > 0 && unstarted.length === views.length) throw new UnstartableStart(unstarted, unstarted);
  return new Set(unstarted);
}

/**
 * A start Temporal refused as invalid, after its posts were failed (or, an immediate thread, discarded) and refunded:
 * the request's 500 `internal_error` (publishing-api.md: an unexpected server error; "a failed post is never
 * charged"), naming the rows kept so the user can read them, or saying none was. A fan-out catches it per account
 * (`fanOutStarts`): the accounts whose workflows started carry on, and the answer names each one's state.
 */
export class UnstartableStart extends ApiError {
  constructor(
    readonly postIds: readonly string[],
    readonly kept: readonly string[],
  ) {
    super(
      'internal_error',
      `Herald could not start publishing: nothing was published and no quota was used; ${
        kept.length > 0 ? `the posts are kept as failed (${kept.join(', ')})` : 'nothing of it was kept'
      }`,
    );
  }
}

/**
 * The starts of a fan-out's posts or threads, each one's refusal as invalid kept apart (`refused`, by key) while
 * the others go on: a 500 for the whole request would tell the client nothing went out while the started ones
 * publish (a client that sends it again publishes them twice). Only when every start was refused is it the
 * request's 500, naming every row kept. Anything else thrown is thrown.
 */
export async function fanOutStarts<K, T>(keys: readonly K[], start: (key: K) => Promise<T>): Promise<{ done: Map<K, T>; refused: Map<K, UnstartableStart> }> {
  const done = new Map<K, T>();
  const refused = new Map<K, UnstartableStart>();
  await Promise.all(
    keys.map(async (key) => {
      try {
        done.set(key, await start(key));
      } catch (err) {
        if (!(err instanceof UnstartableStart)) throw err;
        refused.set(key, err);
      }
    }),
  );
  if (keys.length > 0 && refused.size === keys.length) {
    const all = [...refused.values()];
    throw new UnstartableStart(
      all.flatMap((e) => e.postIds),
      all.flatMap((e) => e.kept),
    );
  }
  return { done, refused };
}

/**
 * A start refused as invalid (search attributes the cluster does not accept, say): the reconciler does not ask again
 * for such a start (`refusedStarts`), so the rows would wait for ever. They are failed with the sentence and refunded
 * (an immediate thread discarded, as a thread failing at once is), and `UnstartableStart` says what was kept.
 */
async function refuseUnstartable(rt: PostsRuntime, postIds: readonly string[], err: unknown, failUnstarted: (sentence: string) => Promise<readonly string[]>): Promise<never> {
  rt.logger.error(
    { err, postIds, refusal: err instanceof Error && err.cause instanceof Error ? err.cause.message : String(err) },
    'Temporal refused to start the workflow of these posts as invalid: they are failed with their quota returned, and the request is told (500, or their accounts\' results in a fan-out)',
  );
  throw new UnstartableStart(postIds, await failUnstarted(unstartableSentence));
}
