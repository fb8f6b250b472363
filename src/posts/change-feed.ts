import pg from 'pg';
import type { FirstCommentStatus, PostStatus } from '../db/tables/posts';
import type { Logger } from '../logger';

/** Channel and payload written by the `posts_notify_change` trigger (migration 0051). */
const POST_CHANGES_CHANNEL = 'herald_post_changes';

interface PostChange {
  postId: string;
  status: PostStatus;
  firstCommentStatus: FirstCommentStatus | null;
}

function parsePostChange(payload: string): PostChange | null {
  const [postId, status, firstComment] = payload.split(':');
  if (!postId || !status) return null;
  return { postId, status: status as PostStatus, firstCommentStatus: (firstComment || null) as FirstCommentStatus | null };
}

/**
 * When a request waiting for an immediate publish may answer: the platform answered (the row left `publishing`) and,
 * for a published post, its first comment was tried. Media cleanup and later steps do not hold the answer.
 */
export function isSettled(change: Pick<PostChange, 'status' | 'firstCommentStatus'>): boolean {
  return change.status !== 'publishing' && !(change.status === 'published' && change.firstCommentStatus === 'pending');
}

interface SettledWatch {
  /** Resolves once the post settles; stays pending when the feed is down (callers race it with the workflow result). */
  settled: Promise<void>;
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
  close(): Promise<void>;
}

const RECONNECT_DELAY_MS = 1_000;

/**
 * One LISTEN connection per API process, outside the pool. A lost connection is re-opened after a second; while it
 * is down the waiting requests are answered by the workflow result instead, only later.
 */
export function startPostChangeFeed(connectionString: string, logger: Logger): PostChangeFeed {
  const waiters = new Map<string, Set<() => void>>();
  /** The `inDoubt` of every watch made while the feed listens, resolved when it stops listening. */
  const doubters = new Set<() => void>();
  const doubtAll = () => {
    for (const doubt of doubters) doubt();
    doubters.clear();
  };
  let client: pg.Client | null = null;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  let markReady!: () => void;
  const ready = new Promise<void>((resolve) => (markReady = resolve));

  const onNotification = (message: pg.Notification) => {
    const change = message.channel === POST_CHANGES_CHANNEL && message.payload ? parsePostChange(message.payload) : null;
    if (!change || !isSettled(change)) return;
    const settle = waiters.get(change.postId);
    waiters.delete(change.postId);
    for (const fn of settle ?? []) fn();
  };

  const reconnectLater = () => {
    if (closed || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      void connect();
    }, RECONNECT_DELAY_MS);
    retry.unref();
  };

  async function connect(): Promise<void> {
    const candidate = new pg.Client({ connectionString, application_name: 'herald-post-changes' });
    candidate.on('notification', onNotification);
    const lost = (err?: Error) => {
      if (closed || client !== candidate) return;
      logger.warn({ err }, 'post change feed lost its connection; reconnecting');
      client = null;
      doubtAll();
      candidate.end().catch(() => undefined);
      reconnectLater();
    };
    // A cut connection errors and then ends; a server that closes it cleanly only ends it.
    candidate.on('error', lost);
    candidate.on('end', () => lost());
    try {
      await candidate.connect();
      await candidate.query(`LISTEN ${POST_CHANGES_CHANNEL}`);
    } catch (err) {
      logger.warn({ err }, 'post change feed could not listen; retrying');
      await candidate.end().catch(() => undefined);
      reconnectLater();
      return;
    }
    if (closed) {
      await candidate.end().catch(() => undefined);
      return;
    }
    client = candidate;
    markReady();
  }
  void connect();

  return {
    ready,
    watch(postId) {
      let resolve!: () => void;
      const settled = new Promise<void>((done) => (resolve = done));
      const set = waiters.get(postId) ?? new Set();
      set.add(resolve);
      waiters.set(postId, set);
      let doubt!: () => void;
      const inDoubt = new Promise<void>((doubted) => (doubt = doubted));
      if (client === null) doubt();
      else doubters.add(doubt);
      return {
        settled,
        inDoubt,
        stop: () => {
          doubters.delete(doubt);
          set.delete(resolve);
          if (set.size === 0 && waiters.get(postId) === set) waiters.delete(postId);
        },
      };
    },
    async close() {
      closed = true;
      clearTimeout(retry);
      waiters.clear();
      doubtAll();
      await client?.end().catch(() => undefined);
      client = null;
    },
  };
}
