import type { AccountLifecycle } from '../accounts/lifecycle';
import { ApiError } from '../errors';
import { platformName } from '../platforms/availability';
import { isPlatformFailure } from '../platforms/types';
import type { PostsRuntime } from '../posts/runtime';
import { commentActionRefusal } from './actions-failure';
import { checkCommentTarget, loadCommentRows, loadCommentTarget, type CommentAction, type CommentTarget } from './actions-target';
import { toCommentView, type CommentView } from './listing-view';
import { markCommentHidden, markCommentsDeleted } from './repository';

/**
 * Hiding and deleting a comment (publishing-api.md "POST .../hide", "DELETE .../comments/:comment_id"). Both cost
 * nothing, reach the platform first and change the stored comment only once the platform confirmed; a refusal
 * changes nothing. Replies: `actions-reply.ts`.
 */

export type CommentActionsRuntime = Pick<PostsRuntime, 'db' | 'config' | 'sealedBox' | 'adapters' | 'logger' | 'now'> & {
  /** Cancels the scheduled posts of an account whose connection a platform refused (`connection_lost`). */
  lifecycle?: AccountLifecycle;
};

/** Sets `hidden` as asked and returns the whole comment. Asking for the state it already has changes nothing. */
export async function setCommentHidden(rt: CommentActionsRuntime, userId: string, postId: string, commentId: string, hidden: boolean): Promise<CommentView> {
  const target = await loadCommentTarget(rt, userId, postId, commentId, 'hide');
  if (target.comment.hidden === hidden) return toCommentView(target.comment);
  const adapter = rt.adapters[target.post.platform];
  // A comment already gone from the platform has nothing to hide there; `hidden` only decides whether Herald lists it.
  if (!target.comment.deleted) await onPlatform(rt, target, 'hide', () => adapter.hideComment!(target.ctx, target.comment.platform_comment_id, hidden));
  return toCommentView(await markCommentHidden(rt.db, target.comment.id, hidden));
}

/**
 * Deletes the comment on the platform, then records it (and, per platform, its replies) deleted; a comment whose
 * reply it was counts as unanswered again. Deleting it again answers the same before any other check (a connection
 * lost or a `platform:comments` flag since) and without calling the platform.
 */
export async function deleteComment(rt: CommentActionsRuntime, userId: string, postId: string, commentId: string): Promise<{ id: string; deleted: true }> {
  const rows = await loadCommentRows(rt, userId, postId, commentId);
  if (rows.comment?.deleted) return { id: rows.comment.id, deleted: true };
  const target = checkCommentTarget(rt, rows, 'delete');
  const adapter = rt.adapters[target.post.platform];
  // Adapters resolve when the platform says the comment is already gone: gone is what was asked for.
  await onPlatform(rt, target, 'delete', () => adapter.deleteComment!(target.ctx, target.comment.platform_comment_id, target.post.platform_post_id));
  await markCommentsDeleted(rt.db, target.post.id, target.post.platform, [target.comment.id]);
  return { id: target.comment.id, deleted: true };
}

/**
 * Runs one platform call of an action; a refusal becomes the client's error (see `commentActionRefusal`). A platform
 * that says the comment no longer exists is believed: the comment is recorded deleted and the answer is 404.
 */
export async function onPlatform<T>(rt: CommentActionsRuntime, target: CommentTarget, action: CommentAction, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (!isPlatformFailure(err)) throw err;
    rt.logger.info({ platform: err.platform, kind: err.kind, detail: err.detail, action, commentId: target.comment.id }, 'platform refused a comment action');
    if (err.kind === 'gone') {
      await markCommentsDeleted(rt.db, target.post.id, target.post.platform, [target.comment.id]);
      throw new ApiError('not_found', `${platformName(target.post.platform)} no longer has comment ${target.comment.id}; it is now listed as deleted (include_deleted=true).`);
    }
    throw await commentActionRefusal({ db: rt.db, lifecycle: rt.lifecycle }, target.account, err);
  }
}
