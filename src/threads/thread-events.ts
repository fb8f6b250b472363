import type { Transaction } from 'kysely';
import type { Database } from '../db';
import type { PostRow } from '../db/tables/posts';
import { recordEvents } from '../events/outbox';
import { currentRequestOrigin } from '../events/request-origin';
import type { PostView } from '../posts/post-view';
import { loadPostViews } from '../posts/view-queries';
import { threadPartIds } from './reads';

type Trx = Transaction<Database>;

/**
 * The thread's event, in the transaction of its change. `posts` defaults to the parts as they now are; its request
 * is the one being served, else the one the parts record (an immediate publish reported by the worker).
 */
export async function recordThreadEvent(
  trx: Trx,
  type: 'thread.published' | 'thread.failed',
  threadId: string,
  extra: { posts?: PostView[]; thread_rollback?: unknown; owner?: { user_id: string; request_origin: PostRow['request_origin'] }; partIds?: readonly string[] } = {},
): Promise<void> {
  // Every part of a thread has its user and request origin (they are inserted together): any part's will do.
  const part = extra.owner ?? (await trx.selectFrom('posts').select(['user_id', 'request_origin']).where('thread_id', '=', threadId).orderBy('thread_order').executeTakeFirst());
  if (!part) return;
  const posts = extra.posts ?? (await loadPostViews(trx, extra.partIds ?? (await threadPartIds(trx, threadId)))).sort((a, b) => (a.thread_order ?? 0) - (b.thread_order ?? 0));
  const data = type === 'thread.failed' ? { thread_id: threadId, posts, thread_rollback: extra.thread_rollback ?? null } : { thread_id: threadId, posts };
  await recordEvents(trx, [{ userId: part.user_id, type, data, request: currentRequestOrigin() ?? part.request_origin }]);
}
