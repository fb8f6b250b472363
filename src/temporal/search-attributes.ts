import { defineSearchAttributeKey, SearchAttributeType, type SearchAttributePair } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import { sql } from 'kysely';
import type { Db } from '../db';
import type { Logger } from '../logger';
import { SEARCH_ATTRIBUTE_LIMITS } from '../../temporal-dev/limits';

/**
 * Search attributes that make Herald's workflows findable in the Temporal Web UI: `PostId = '<uuid>'` finds the
 * workflow that publishes a post, whether it is the post's own or its fan-out group's, and for a thread's first
 * parts its thread's; `ThreadId = '<uuid>'` finds a thread's workflow whatever its length.
 * PostId and Platform are lists (a group or thread workflow publishes several posts, possibly on several platforms).
 */
const searchAttributeKeys = {
  PostId: defineSearchAttributeKey('PostId', SearchAttributeType.KEYWORD_LIST),
  ThreadId: defineSearchAttributeKey('ThreadId', SearchAttributeType.KEYWORD),
  GroupId: defineSearchAttributeKey('GroupId', SearchAttributeType.KEYWORD),
  UserId: defineSearchAttributeKey('UserId', SearchAttributeType.KEYWORD),
  Platform: defineSearchAttributeKey('Platform', SearchAttributeType.KEYWORD_LIST),
} as const;

/** IndexedValueType numbers for OperatorService.AddSearchAttributes. */
const INDEXED_VALUE_TYPE = { KEYWORD: 2, KEYWORD_LIST: 7 } as const;

/**
 * False while registration fails (e.g. a Temporal Cloud API key without operator rights): workflows then start
 * without search attributes rather than being refused for unknown ones; true again once a retry succeeds.
 */
let attachSearchAttributes = true;

/** What the search attributes of a post's workflow are made of (a `posts` row, or the row about to be written). */
export interface SearchedPost {
  id: string;
  user_id: string;
  platform: string;
  thread_id?: string | null;
  thread_order?: number | null;
  group_id?: string | null;
}

/** The search attributes of the workflow that publishes these posts (read from their rows). */
export async function workflowSearchAttributes(db: Db, where: { postIds?: readonly string[]; threadId?: string }): Promise<SearchAttributePair[]> {
  if (!attachSearchAttributes) return [];
  let query = db.selectFrom('posts').select(['id', 'user_id', 'platform', 'thread_id', 'thread_order', 'group_id']);
  if (where.threadId) query = query.where('thread_id', '=', where.threadId);
  else if (where.postIds?.length) query = query.where('id', 'in', [...where.postIds]);
  else return [];
  return searchAttributesOf(await query.execute());
}

/**
 * The posts of many workflows in one read (`giveSearchAttributesToRunning`): posts by id, threads' and groups' parts.
 * Read whether attributes are on or not: the caller asks once they are.
 */
export async function searchedPostsOf(db: Db, ids: { postIds: readonly string[]; threadIds: readonly string[]; groupIds: readonly string[] }): Promise<SearchedPost[]> {
  // Only the arms with ids (as `disownHolds`): an empty arm would keep the thread and group indexes from applying.
  const arms = [
    ...(ids.postIds.length ? [sql<boolean>`id = any(${[...ids.postIds]}::uuid[])`] : []),
    ...(ids.threadIds.length ? [sql<boolean>`thread_id = any(${[...ids.threadIds]}::uuid[])`] : []),
    ...(ids.groupIds.length ? [sql<boolean>`group_id = any(${[...ids.groupIds]}::uuid[])`] : []),
  ];
  if (arms.length === 0) return [];
  return db
    .selectFrom('posts')
    .select(['id', 'user_id', 'platform', 'thread_id', 'thread_order', 'group_id'])
    .where((eb) => eb.or(arms))
    .execute();
}

/**
 * The same from rows the caller holds (the API, which has just written them): no read. The lists are cut to what
 * fits one value within Temporal's default limit (`withinValueLimit`); the other values are one uuid each, so the
 * whole stays far within the total limit too. A real cluster refuses a start beyond either (INVALID_ARGUMENT), and
 * the contract sets no maximum number of thread parts: until 2026-12-07 a thread of 53 parts or more never started.
 */
export function searchAttributesOf(posts: readonly SearchedPost[]): SearchAttributePair[] {
  if (!attachSearchAttributes || posts.length === 0) return [];
  // A thread's parts in their order (its first parts are the ones listed when not all fit), others by id: the API
  // and the reconciler give the same workflow the same values.
  const rows = [...posts].sort((a, b) => (a.thread_order ?? 0) - (b.thread_order ?? 0) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const first = rows[0]!;
  const pairs: SearchAttributePair[] = [
    { key: searchAttributeKeys.PostId, value: withinValueLimit(rows.map((r) => r.id)) },
    { key: searchAttributeKeys.UserId, value: first.user_id },
    { key: searchAttributeKeys.Platform, value: withinValueLimit([...new Set(rows.map((r) => r.platform))]) },
  ];
  if (first.thread_id) pairs.push({ key: searchAttributeKeys.ThreadId, value: first.thread_id });
  if (first.group_id) pairs.push({ key: searchAttributeKeys.GroupId, value: first.group_id });
  return pairs;
}

/**
 * The leading values of a keyword list whose JSON (the payload Temporal measures) fits its per-value limit: 52
 * uuids, so every post of a fan-out (at most 25) and the first 52 parts of a thread.
 */
function withinValueLimit(values: readonly string[]): string[] {
  const kept: string[] = [];
  let bytes = 2; // []
  for (const value of values) {
    bytes += Buffer.byteLength(JSON.stringify(value)) + (kept.length > 0 ? 1 : 0);
    if (bytes > SEARCH_ATTRIBUTE_LIMITS.valueBytes) break;
    kept.push(value);
  }
  return kept;
}

/** How long after a refused registration it is tried again: doubling from the first, never longer than the last. */
const defaultRetry = { firstMs: 5_000, maxMs: 5 * 60_000 };

interface SearchAttributeRegistration {
  /** Stops the retries (the service's shutdown). */
  stop(): void;
}

/**
 * Registers Herald's search attributes in the namespace (a real cluster refuses workflows that carry unknown ones;
 * the embedded server learns their types for the Web UI's filter). Attributes already there are left alone.
 * Resolves after the first try. A refusal (no operator rights, the namespace not there yet, the cluster not answering)
 * switches attributes off and is tried again in the background, with a backoff, until it succeeds: from then on
 * workflows start with them again. Before 2026-12-07 one failure at start switched them off for the process's life.
 */
export async function registerSearchAttributes(
  client: Client,
  namespace: string,
  logger: Logger,
  retry: { firstMs: number; maxMs: number } = defaultRetry,
  /** Run (not awaited) after each successful registration: `giveSearchAttributesToRunning`, in `src/main.ts`. */
  registered?: () => Promise<unknown>,
): Promise<SearchAttributeRegistration> {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const attempt = async (delayMs: number, failures: number): Promise<void> => {
    if (stopped) return;
    try {
      await addMissing(client, namespace);
      attachSearchAttributes = true;
      if (failures > 0) logger.info({ namespace, failures }, 'search attributes registered: workflows start with PostId/ThreadId/GroupId/UserId/Platform again');
      registered?.().catch((err: unknown) => logger.warn({ err, namespace }, 'could not give search attributes to the running workflows started without them'));
    } catch (err) {
      attachSearchAttributes = false;
      logger.warn(
        { err, namespace, retryInMs: delayMs },
        'could not register search attributes; workflows start without PostId/ThreadId/GroupId/UserId/Platform until a retry succeeds',
      );
      if (stopped) return;
      timer = setTimeout(() => void attempt(Math.min(delayMs * 2, retry.maxMs), failures + 1), delayMs);
      timer.unref();
    }
  };
  await attempt(retry.firstMs, 0);
  return {
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

async function addMissing(client: Client, namespace: string): Promise<void> {
  const wanted = Object.fromEntries(Object.values(searchAttributeKeys).map((k) => [k.name, INDEXED_VALUE_TYPE[k.type as keyof typeof INDEXED_VALUE_TYPE]]));
  const existing = await client.connection.operatorService.listSearchAttributes({ namespace });
  const missing = Object.fromEntries(Object.entries(wanted).filter(([name]) => !(name in (existing.customAttributes ?? {}))));
  if (Object.keys(missing).length > 0) await client.connection.operatorService.addSearchAttributes({ namespace, searchAttributes: missing });
}
