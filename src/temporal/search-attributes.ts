import { defineSearchAttributeKey, SearchAttributeType, type SearchAttributePair } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import type { Db } from '../db';
import type { Logger } from '../logger';

/**
 * Search attributes that make Herald's workflows findable in the Temporal Web UI: `PostId = '<uuid>'` finds the
 * workflow that publishes a post, whether it is the post's own, its fan-out group's or its thread's.
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
 * False once registration failed (e.g. a Temporal Cloud API key without operator rights): workflows then start
 * without search attributes rather than being refused for unknown ones.
 */
let attachSearchAttributes = true;

/** What the search attributes of a post's workflow are made of (a `posts` row, or the row about to be written). */
export interface SearchedPost {
  id: string;
  user_id: string;
  platform: string;
  thread_id?: string | null;
  group_id?: string | null;
}

/** The search attributes of the workflow that publishes these posts (read from their rows). */
export async function workflowSearchAttributes(db: Db, where: { postIds?: readonly string[]; threadId?: string }): Promise<SearchAttributePair[]> {
  if (!attachSearchAttributes) return [];
  let query = db.selectFrom('posts').select(['id', 'user_id', 'platform', 'thread_id', 'group_id']).orderBy('id');
  if (where.threadId) query = query.where('thread_id', '=', where.threadId);
  else if (where.postIds?.length) query = query.where('id', 'in', [...where.postIds]);
  else return [];
  return searchAttributesOf(await query.execute());
}

/** The same from rows the caller holds (the API, which has just written them): no read. */
export function searchAttributesOf(posts: readonly SearchedPost[]): SearchAttributePair[] {
  if (!attachSearchAttributes || posts.length === 0) return [];
  const rows = [...posts].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)); // as `order by id` (uuid)
  const first = rows[0]!;
  const pairs: SearchAttributePair[] = [
    { key: searchAttributeKeys.PostId, value: rows.map((r) => r.id) },
    { key: searchAttributeKeys.UserId, value: first.user_id },
    { key: searchAttributeKeys.Platform, value: [...new Set(rows.map((r) => r.platform))] },
  ];
  if (first.thread_id) pairs.push({ key: searchAttributeKeys.ThreadId, value: first.thread_id });
  if (first.group_id) pairs.push({ key: searchAttributeKeys.GroupId, value: first.group_id });
  return pairs;
}

/**
 * Registers Herald's search attributes in the namespace (a real cluster refuses workflows that carry unknown ones;
 * the embedded server learns their types for the Web UI's filter). Attributes already there are left alone.
 */
export async function registerSearchAttributes(client: Client, namespace: string, logger: Logger): Promise<void> {
  const wanted = Object.fromEntries(Object.values(searchAttributeKeys).map((k) => [k.name, INDEXED_VALUE_TYPE[k.type as keyof typeof INDEXED_VALUE_TYPE]]));
  try {
    const existing = await client.connection.operatorService.listSearchAttributes({ namespace });
    const missing = Object.fromEntries(Object.entries(wanted).filter(([name]) => !(name in (existing.customAttributes ?? {}))));
    if (Object.keys(missing).length > 0) await client.connection.operatorService.addSearchAttributes({ namespace, searchAttributes: missing });
    attachSearchAttributes = true;
  } catch (err) {
    attachSearchAttributes = false;
    logger.warn({ err, namespace }, 'could not register search attributes; workflows start without PostId/ThreadId/GroupId/UserId/Platform');
  }
}
