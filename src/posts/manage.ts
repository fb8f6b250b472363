import type { PostRow } from '../db/tables/posts';
import { ApiError } from '../errors';
import { deleteSupported } from '../platforms/capabilities';
import { platformName } from '../platforms/availability';
import { isPlatformFailure } from '../platforms/types';
import { AccountNotConnectedError, accountOfPost, loadPlatformContext } from './accounts-port';
import { cancelPosts } from './cancel';
import { findOwnLivePost, findOwnPost, findOwnPostView, getPostView } from './read';
import { anyMayBeLive, markDeleted } from './removals';
import * as posts from './repository';
import { platformRefusal, type PlatformRefusal } from './outcomes';
import { placementOf } from './rules/placement';
import type { PostView } from './post-view';
import type { PostsRuntime } from './runtime';
import { threadPartIds } from '../threads/reads';
import { signalThread } from '../threads/workflow-client';

/** A deleted post (publishing-api.md "DELETE"): the ids that went with it, for a draft group or a scheduled thread. */
export interface PostDeletion {
  kind: 'deleted';
  id: string;
  deleted_ids?: string[];
  cancelled_ids?: string[];
}

/**
 * `GET /api/v1/posts/:id`: hidden and deleted posts are readable. A published post whose link could not be read at
 * publish time (`platform_post_url_unread`: only threads and instagram, whose links Herald cannot build, say so)
 * asks the platform once more and stores the answer, a link or none, after which no GET asks again; a failed ask
 * changes nothing, so the next GET asks again. A link the platform gave none of is never asked for.
 */
export async function getPost(rt: PostsRuntime, userId: string, postId: string): Promise<PostView> {
  const { row, view } = await findOwnPostView(rt.db, userId, postId);
  if (row.status === 'published' && row.platform_post_url_unread && row.platform_post_id && row.account_id) {
    await refreshUrl(rt, row).catch((err) => rt.logger.warn({ err, postId }, 'could not refresh a post link'));
    return getPostView(rt.db, row.id);
  }
  return view;
}

async function refreshUrl(rt: PostsRuntime, row: PostRow): Promise<void> {
  const adapter = rt.adapters[row.platform];
  if (!adapter.resolveUrl || !row.account_id || !row.platform_post_id) return;
  const { ctx } = await loadPlatformContext(rt.db, rt.sealedBox, row.account_id);
  await posts.storeResolvedUrl(rt.db, row.id, await adapter.resolveUrl(ctx, row.platform_post_id));
}

/**
 * `DELETE /api/v1/posts/:id` (publishing-api.md "DELETE"): a published post is deleted on the platform first and
 * reported deleted only once the platform confirms (already gone counts); its refusal changes nothing. A
 * scheduled post is cancelled with its quota returned; a draft goes with its whole draft group. The record stays.
 */
export async function deletePost(rt: PostsRuntime, userId: string, postId: string): Promise<PostDeletion | PlatformRefusal> {
  const row = await findOwnPost(rt.db, userId, postId);
  const done = (extra: Partial<PostDeletion> = {}): PostDeletion => ({ kind: 'deleted', id: row.id, ...extra });
  switch (row.status) {
    case 'deleted':
      return done();
    case 'draft': {
      if (row.promoted_to_id !== null) throw new ApiError('post_not_editable', 'The draft was already promoted; delete the post it became');
      const deleted = await posts.deleteDrafts(rt.db, userId, posts.unitOf(row));
      return done({ deleted_ids: deleted.sort() });
    }
    case 'scheduled': {
      // Deleting any part of a scheduled thread cancels the whole thread (publishing-api.md "DELETE" rule 5).
      const unit = row.thread_id ? await threadPartIds(rt.db, row.thread_id) : [row.id];
      if (await anyMayBeLive(rt.db, unit)) throw new ApiError('post_not_editable', mayBeLiveSentence);
      const cancelled = await cancelPosts(rt, { postIds: unit, reason: null, unlessMayBeLive: true });
      if (cancelled.length === 0) return deletePost(rt, userId, postId); // it started publishing meanwhile
      if (row.thread_id) await signalThread(rt, row.thread_id);
      return done(row.thread_id ? { cancelled_ids: [...cancelled].sort() } : {});
    }
    case 'publishing':
      throw new ApiError('post_not_editable', 'The post is publishing right now; delete it once it has published');
    case 'failed': {
      // A part of a failed thread that its rollback could not delete is still live (its id kept): deleted there first.
      const refused = row.platform_post_id === null ? null : await deleteOnPlatform(rt, row);
      if (refused) return refused;
      await markDeleted(rt.db, row.id, 'failed');
      return done();
    }
    case 'published': {
      const refused = await deleteOnPlatform(rt, row);
      if (refused) return refused;
      await markDeleted(rt.db, row.id, 'published');
      return done();
    }
  }
}

/**
 * The DELETE of a scheduled post waiting with an attempt that never reported back (a server error to a create that
 * may have landed): publishing-api.md's 409 `post_not_editable` is for a post "publishing" or "published", and this
 * one may be either; cancelled, the user would be told it never went out while it may be live (and its next attempt
 * would no longer look). Its next attempt looks first, after which it is published (deleted on the platform by a
 * DELETE then) or scheduled with its mark closed (cancelled then).
 */
const mayBeLiveSentence =
  'An earlier attempt to publish this post did not report back, so it may already be on the platform: it cannot be cancelled until its next attempt has checked; delete it then';

/** Null once the platform deleted it (or no longer had it); the refusal otherwise. */
async function deleteOnPlatform(rt: PostsRuntime, row: PostRow): Promise<PlatformRefusal | null> {
  const name = platformName(row.platform);
  let context;
  try {
    if (row.account_id === null) throw new AccountNotConnectedError('', 'disconnected');
    context = await loadPlatformContext(rt.db, rt.sealedBox, row.account_id);
  } catch (err) {
    if (!(err instanceof AccountNotConnectedError)) throw err;
    // A post that no connection could delete is told so (501) rather than sent to reconnect for it; the account's
    // row, kept after a disconnect, says how it was connected.
    const account = row.account_id === null ? undefined : await accountOfPost(rt.db, row.account_id);
    throwIfDeleteUnsupported(row, account?.via ?? undefined);
    return platformRefusal(`The ${name} account that published this post is disconnected; reconnect it to delete the post on ${name}`);
  }
  throwIfDeleteUnsupported(row, context.account.via ?? undefined);
  try {
    await rt.adapters[row.platform].delete(context.ctx, row.platform_post_id!, row.published_at ?? undefined);
    return null;
  } catch (err) {
    if (!isPlatformFailure(err)) throw err;
    return err.kind === 'gone' ? null : platformRefusal(err.clientMessage);
  }
}

/** 501 `delete_unsupported` for a post its platform lets no API delete (by the account's connection or the placement). */
function throwIfDeleteUnsupported(row: PostRow, via: string | undefined): void {
  const name = platformName(row.platform);
  const placement = placementOf(row.platform, row.configuration) ?? undefined;
  if (deleteSupported(row.platform, { via, placement })) return;
  const why =
    row.platform === 'instagram'
      ? 'Instagram accounts connected with via: instagram cannot delete posts through the API; connect the account via facebook to delete'
      : placement === 'story'
        ? `${name} stories cannot be deleted through the API; they disappear after 24 hours`
        : `${name} does not allow deleting this post through the API`;
  throw new ApiError('delete_unsupported', `${why}. Nothing was changed.`);
}

/**
 * `POST /api/v1/posts/:id/hide|unhide`: the post and everything created with it by one request (its fan-out group,
 * its thread) change together; nothing reaches a platform, nothing is charged. A promoted draft is gone, as for GET:
 * 404 by its id, and not among the posts of its unit.
 */
export async function setHidden(rt: PostsRuntime, userId: string, postId: string, hidden: boolean): Promise<{ id: string; hidden: boolean; hidden_ids: string[] }> {
  const row = await findOwnLivePost(rt.db, userId, postId);
  const changed = await posts.setHidden(rt.db, userId, posts.unitOf(row), hidden);
  return { id: row.id, hidden, hidden_ids: changed.sort() };
}
