import type { FirstCommentStatus, PostStatus } from '../db/tables/posts';
import type { DatabaseNotifications, NotificationChannel } from '../db/notifications';
import type { PostView } from './post-view';

/** Channel and payloads written by the `posts_notify_change` and `posts_notify_removal` triggers (migrations 0051, 0170). */
const POST_CHANGES_CHANNEL = 'herald_post_changes' satisfies NotificationChannel;

interface PostChange {
  postId: string;
  /** `removed`: the row was deleted while `publishing` (migration 0170: an immediate thread that failed). */
  status: PostStatus | 'removed';
  firstCommentStatus: FirstCommentStatus | null;
}

function parsePostChange(payload: string): PostChange | null {
  const [postId, status, firstComment] = payload.split(':');
  if (!postId || !status) return null;
  return { postId, status: status as PostChange['status'], firstCommentStatus: (firstComment || null) as FirstCommentStatus | null };
}

/**
 * When a request waiting for an immediate publish may answer: the platform answered (the row left `publishing`) and,
 * for a published post, its first comment was tried. Media cleanup and later steps do not hold the answer.
 */
export function isSettled(change: Pick<PostChange, 'status' | 'firstCommentStatus'>): boolean {
  return change.status !== 'publishing' && !(change.status === 'published' && change.firstCommentStatus === 'pending');
}

/** How a watched post settled: its row says the outcome, or the row is gone and only its workflow can say why. */
type Settlement = 'settled' | 'removed';

interface SettledWatch {
  /** Resolves once the post settles; stays pending when the feed is down (callers race it with the workflow result). */
  settled: Promise<Settlement>;
  /** The post as it settled, when this process recorded it and said so (`recording`): no read needed to answer. */
  readonly view: PostView | undefined;
  /**
   * Resolves when `settled` can no longer be relied on: the feed was not listening when the watch was made, or lost
   * its connection since (a change committed while it was down is never heard). The caller then asks the workflow.
   */
  inDoubt: Promise<void>;
  stop(): void;
}

export interface PostChangeFeed {
  /** Resolves once the feed first listens (tests wait for it; requests need not: the workflow result backs them). */
  ready: Promise<void>;
  /** Register before the workflow starts, so no change can slip between the start and the watch. */
  watch(postId: string): SettledWatch;
  /**
   * This process is recording these posts (the worker's recording of a publish, in the process whose API may be
   * waiting for them). Call the returned function once the recording answered, with the views of the posts it
   * recorded as committed (none if it failed): their watches here settle with the view, so the answer needs no read.
   * The NOTIFY of a recording in flight is held until then (it can arrive before the recording's own answer), and
   * settles as usual when no view came. A process whose API waits for nothing (a worker of its own) tells no one;
   * the NOTIFY answers elsewhere.
   */
  recording(postIds: readonly string[]): (recorded: readonly PostView[]) => void;
  /** Stops hearing changes; the process's notifications connection stays open for its other listeners. */
  close(): void;
}

/**
 * Post changes heard on the process's notifications connection (`src/db/notifications.ts`). While that connection is
 * down, the waiting requests are answered by the workflow result instead, only later.
 */
export function startPostChangeFeed(notifications: DatabaseNotifications): PostChangeFeed {
  const waiters = new Map<string, Set<(how: Settlement, view?: PostView) => void>>();
  const settle = (postId: string, how: Settlement, view?: PostView) => {
    const settling = waiters.get(postId);
    waiters.delete(postId);
    for (const fn of settling ?? []) fn(how, view);
  };
  /** The `inDoubt` of every watch made while the feed listens, resolved when it stops listening. */
  const doubters = new Set<() => void>();
  const doubtAll = () => {
    for (const doubt of doubters) doubt();
    doubters.clear();
  };
  /** Posts this process is recording (a count: a retried recording may overlap), and what their NOTIFY said meanwhile. */
  const inFlight = new Map<string, number>();
  const heldBack = new Map<string, Settlement>();
  const stopHearing = notifications.on(POST_CHANGES_CHANNEL, (payload) => {
    const change = parsePostChange(payload);
    if (!change || !isSettled(change)) return;
    const how = change.status === 'removed' ? 'removed' : 'settled';
    if (inFlight.has(change.postId)) heldBack.set(change.postId, how);
    else settle(change.postId, how);
  });
  const stopDoubting = notifications.onDeaf(doubtAll);

  return {
    ready: notifications.ready,
    watch(postId) {
      let resolve!: (how: Settlement, view?: PostView) => void;
      let view: PostView | undefined;
      const settled = new Promise<Settlement>((done) => {
        resolve = (how, settledAs) => {
          view = settledAs;
          done(how);
        };
      });
      const set = waiters.get(postId) ?? new Set();
      set.add(resolve);
      waiters.set(postId, set);
      let doubt!: () => void;
      const inDoubt = new Promise<void>((doubted) => (doubt = doubted));
      if (!notifications.listening) doubt();
      else doubters.add(doubt);
      return {
        settled,
        get view() {
          return view;
        },
        inDoubt,
        stop: () => {
          doubters.delete(doubt);
          set.delete(resolve);
          if (set.size === 0 && waiters.get(postId) === set) waiters.delete(postId);
        },
      };
    },
    recording(postIds) {
      for (const id of postIds) inFlight.set(id, (inFlight.get(id) ?? 0) + 1);
      let told = false;
      return (recorded) => {
        if (told) return;
        told = true;
        const views = new Map(recorded.map((view) => [view.id, view]));
        for (const id of postIds) {
          const left = inFlight.get(id)! - 1;
          if (left > 0) inFlight.set(id, left);
          else inFlight.delete(id);
          const view = views.get(id);
          if (view && isSettled({ status: view.status, firstCommentStatus: view.first_comment?.status ?? null })) settle(id, 'settled', view);
          else if (left === 0 && heldBack.has(id)) settle(id, heldBack.get(id)!);
          if (left === 0) heldBack.delete(id);
        }
      };
    },
    close() {
      stopHearing();
      stopDoubting();
      waiters.clear();
      heldBack.clear();
      doubtAll();
    },
  };
}
