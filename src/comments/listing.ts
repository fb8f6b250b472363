import { sql } from 'kysely';
import { DateTime } from 'luxon';
import type { Db } from '../db';
import type { CommentSyncStateRow, CommentSyncStatus } from '../db/tables/comments';
import type { PostRow } from '../db/tables/posts';
import { isAcceptedInstant } from '../db/timestamp';
import { ApiError } from '../errors';
import type { Logger } from '../logger';
import { postNotFound } from '../posts/read';
import { commentCapabilitiesOrRefuse, hidesNothingOnPart, notPublishedReason } from './readable';
import { effectiveLimits } from '../plans';
import type { Client } from '@temporalio/client';
import { planRefusal, type AllowanceLimits } from './allowance';
import { decodeCursor, encodeCursor } from './listing-cursor';
import { toCommentView, type CommentView } from './listing-view';
import { loadListingSource } from './listing-source';
import { hasStoredComments } from './repository';
import { refreshAndWait, requestRefresh } from './sync-client';
import { listedLongAgo, loadSyncState, touchListed } from './sync-state';
import { isDue } from './sync-windows';

/**
 * `GET /api/v1/posts/:id/comments` (publishing-api.md "Comments endpoints", sync rules; decisions.md "Comments"):
 * always answers from the stored snapshot, newest first, by keyset on (created_at, id); asks the post's sync
 * workflow for a refresh when one is due (`auto`: behind the answer; `true`: waits for it, at most 10 s).
 */

interface ListingRuntime {
  db: Db;
  logger: Logger;
  temporal?: Client;
  taskQueue: string;
  config: { comingSoon: ReadonlySet<string> };
  now(): Date;
}

interface ListingQuery {
  limit?: number;
  cursor?: string;
  since?: Date;
  sync?: 'auto' | 'true' | 'false';
  include_hidden?: boolean;
  include_deleted?: boolean;
  parent_id?: string;
}

interface SyncMeta {
  status: CommentSyncStatus;
  synced_at: string | null;
  reason: string | null;
  next_sync_after: string | null;
}

interface CommentListing {
  data: CommentView[];
  meta: {
    next_cursor: string | null;
    capabilities: { reply: boolean; hide: boolean; delete_own: boolean; delete_any: boolean };
    sync: SyncMeta;
  };
}

const DEFAULT_COMMENT_PAGE = 25;

export async function listComments(rt: ListingRuntime, userId: string, postId: string, query: ListingQuery): Promise<CommentListing> {
  const source = await loadListingSource(rt.db, userId, postId);
  if (!source) throw postNotFound(postId);
  const { post, account } = source;
  const caps = commentCapabilitiesOrRefuse(post.platform, account, rt.config.comingSoon);
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor, post.id);

  const planLimits = account ? { ...effectiveLimits(account.plan, account), planName: account.plan } : undefined;
  const sync = await syncForListing(rt, post, source.syncState, account?.own_credentials ?? false, planLimits, query.sync ?? 'auto');
  const limit = query.limit ?? DEFAULT_COMMENT_PAGE;
  let select = rt.db.selectFrom('comments').selectAll().where('post_id', '=', post.id);
  if (query.include_hidden !== true) select = select.where('hidden', '=', false);
  if (query.include_deleted !== true) select = select.where('deleted', '=', false);
  if (query.parent_id !== undefined) select = select.where('platform_parent_id', '=', query.parent_id);
  if (query.since !== undefined) select = select.where('created_at', '>', query.since);
  if (after) select = select.where(sql<boolean>`(created_at, id) < (${after.createdAt}::timestamptz, ${after.id}::uuid)`);
  const rows = await select.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit + 1).execute();
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    data: page.map(toCommentView),
    meta: {
      next_cursor: rows.length > limit && last ? encodeCursor(post.id, last) : null,
      capabilities: { reply: caps.reply, hide: caps.hide && !hidesNothingOnPart(post, caps), delete_own: caps.deleteOwn, delete_any: caps.deleteAny },
      sync,
    },
  };
}

/**
 * The listing's side of the sync rules: records that the post is being read (`auto`, `true`), asks for the refresh that is due, and
 * reports the sync state. On `sync=true` with nothing stored, a refusal is the answer (rule 6).
 */
async function syncForListing(
  rt: ListingRuntime,
  post: PostRow,
  storedState: CommentSyncStateRow | undefined,
  ownCredentials: boolean,
  limits: AllowanceLimits | undefined,
  mode: 'auto' | 'true' | 'false',
): Promise<SyncMeta> {
  const now = rt.now();
  if (post.status !== 'published' || !post.platform_post_id) {
    return { status: 'unsupported', reason: notPublishedReason(post.status), synced_at: iso(storedState?.synced_at ?? null), next_sync_after: null };
  }
  let state = storedState;
  // Only a listing that may refresh keeps the background refreshes going: `sync=false` never refreshes (rule 2), and a
  // client polling with it used to keep them running and spend the allowance (README, 2026-12-07).
  if (mode !== 'false' && (!state || listedLongAgo(state.last_listed_at, now))) await touchListed(rt.db, post.id, now);

  // Rule 7 needs no workflow: the plan decides it, and it holds from the very first listing.
  if (limits) {
    const refusal = planRefusal(post.platform, ownCredentials, limits);
    if (refusal) return { status: 'plan', reason: refusal, synced_at: syncedAt(post, state), next_sync_after: iso(state?.next_sync_after ?? null) ?? now.toISOString() };
  }
  if (mode === 'auto' && isDue(post.platform, state, 'auto', now)) await requestRefresh(rt, post.id);
  if (mode === 'true') {
    if (isDue(post.platform, state, 'true', now) && (await refreshAndWait(rt, post.id))) state = await loadSyncState(rt.db, post.id);
    if (state && (await refusedWithoutSnapshot(rt.db, post.id, state))) throw refusalError(state, now);
  }
  return {
    status: state?.status ?? 'ok',
    synced_at: syncedAt(post, state),
    reason: state?.reason ?? null,
    next_sync_after: iso(state?.next_sync_after ?? null) ?? now.toISOString(),
  };
}

const noSnapshotRefusals: ReadonlySet<CommentSyncStatus> = new Set(['budget', 'rate_limited', 'permission']);

async function refusedWithoutSnapshot(db: Db, postId: string, state: CommentSyncStateRow): Promise<boolean> {
  return noSnapshotRefusals.has(state.status) && !(await hasStoredComments(db, postId));
}

function refusalError(state: CommentSyncStateRow, now: Date): ApiError {
  const reason = state.reason ?? 'Comments could not be read.';
  if (state.status === 'budget') return new ApiError('comment_read_budget_exceeded', reason);
  if (state.status === 'permission') return new ApiError('comment_permission_required', reason);
  const waitSeconds = Math.max(1, Math.ceil(((state.next_sync_after?.getTime() ?? now.getTime()) - now.getTime()) / 1000));
  return new ApiError('comment_sync_rate_limited', reason, {}, { 'Retry-After': String(waitSeconds) });
}

/**
 * When the snapshot of a published post was last known to match the platform. Before its first sync that is the
 * moment it was published: it had no comments then but the ones Herald wrote itself, which are stored at once. So
 * `synced_at` is a timestamp, as the contract types it, and `ok` ("snapshot is current") holds as of that time.
 */
function syncedAt(post: PostRow, state: CommentSyncStateRow | undefined): string | null {
  return iso(state?.synced_at ?? post.published_at);
}

function iso(at: Date | null): string | null {
  return at ? at.toISOString() : null;
}

/** `since`: an ISO 8601 date or date-time within `isAcceptedInstant`'s years; without an offset it is read as UTC. */
export function parseSince(value: string): Date | null {
  const parsed = DateTime.fromISO(value, { zone: 'utc' });
  return parsed.isValid && isAcceptedInstant(parsed.toJSDate()) ? parsed.toJSDate() : null;
}
