import pg from 'pg';
import type { Logger } from '../logger';

/**
 * The channels Herald's triggers announce changes on, each with the migration that writes it:
 * - `herald_post_changes` (0051): `<post id>:<status>:<first_comment_status or empty>`, and (0170) `<post id>:removed:`
 *   when a `publishing` post is removed, heard by `src/posts/change-feed.ts`;
 * - `herald_key_changes` (0160): `key:<api key id>` or `user:<user id>`, heard by `src/auth/key-cache.ts`.
 */
export type NotificationChannel = 'herald_post_changes' | 'herald_key_changes';
const channels: readonly NotificationChannel[] = ['herald_post_changes', 'herald_key_changes'];

export interface DatabaseNotifications {
  /** Resolves once it first listens (tests wait for it; nothing else needs to). */
  ready: Promise<void>;
  /** Whether every channel is listened to now: a change committed from here on is heard. */
  readonly listening: boolean;
  /** `onPayload` for every notification on `channel`; returns a function that stops it. */
  on(channel: NotificationChannel, onPayload: (payload: string) => void): () => void;
  /**
   * `onDeaf` each time the connection is lost: a change committed while it is down is never heard, so whoever relies
   * on hearing changes must stop relying on it. Returns a function that stops it.
   */
  onDeaf(onDeaf: () => void): () => void;
  close(): Promise<void>;
}

const RECONNECT_DELAY_MS = 1_000;

/**
 * One LISTEN connection per process, outside the pool, for every channel: a lost connection is re-opened after a
 * second. The features listening each say what they do while it is down (the post feed asks the workflow, the key
 * cache reads keys more often).
 */
export function startDatabaseNotifications(connectionString: string, logger: Logger): DatabaseNotifications {
  const handlers = new Map<NotificationChannel, Set<(payload: string) => void>>(channels.map((channel) => [channel, new Set()]));
  const deafHandlers = new Set<() => void>();
  let client: pg.Client | null = null;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  let markReady!: () => void;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  const becameDeaf = () => {
    for (const fn of [...deafHandlers]) fn();
  };

  const onNotification = (message: pg.Notification) => {
    const listeners = handlers.get(message.channel as NotificationChannel);
    if (!listeners || message.payload === undefined) return;
    for (const fn of listeners) fn(message.payload);
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
    const candidate = new pg.Client({ connectionString, application_name: 'herald-notifications' });
    candidate.on('notification', onNotification);
    const lost = (err?: Error) => {
      if (closed || client !== candidate) return;
      logger.warn({ err }, 'database notifications lost their connection; reconnecting');
      client = null;
      becameDeaf();
      candidate.end().catch(() => undefined);
      reconnectLater();
    };
    // A cut connection errors and then ends; a server that closes it cleanly only ends it.
    candidate.on('error', lost);
    candidate.on('end', () => lost());
    try {
      await candidate.connect();
      await candidate.query(channels.map((channel) => `LISTEN ${channel}`).join('; '));
    } catch (err) {
      logger.warn({ err }, 'database notifications could not listen; retrying');
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
    get listening() {
      return client !== null;
    },
    on(channel, onPayload) {
      const listeners = handlers.get(channel)!;
      listeners.add(onPayload);
      return () => listeners.delete(onPayload);
    },
    onDeaf(onDeaf) {
      deafHandlers.add(onDeaf);
      return () => deafHandlers.delete(onDeaf);
    },
    async close() {
      closed = true;
      clearTimeout(retry);
      const wasListening = client;
      client = null;
      becameDeaf();
      await wasListening?.end().catch(() => undefined);
    },
  };
}
