import { platformContextOf } from '../accounts/credentials';
import { AccountNotActiveError } from '../accounts/not-active';
import type { AccountRow } from '../db/tables/accounts';
import type { CommentRow } from '../db/tables/comments';
import type { PostRow } from '../db/tables/posts';
import { isUuid } from '../db/uuid';
import { ApiError } from '../errors';
import { platformName } from '../platforms/availability';
import type { CommentCapabilities } from '../platforms/capabilities';
import type { PlatformContext } from '../platforms/types';
import { postNotFound } from '../posts/read';
import type { PostsRuntime } from '../posts/runtime';
import { loadCommentablePostRows } from './actions-source';
import { commentCapabilitiesOrRefuse, hidesNothingOnPart, notPublishedReason } from './readable';
import { findCommentForUser, type OwnCommentInput } from './repository';

/**
 * Everything a comment action (reply, hide, delete) checks before it reaches a platform, in the order a client
 * learns of it: the post is the user's (404), the platform's comments are open (501 `platform_coming_soon`), the post
 * can read comments at all (501 `comments_unsupported`), a reply or hide is on a `published` post (501
 * `comments_unsupported`, the listing's reason: a deleted post's comments are no longer read), the comment is one
 * of the post's (404), the platform allows the action on this comment (501 `comment_action_unsupported`), the
 * account is still connected (404) and the connection can carry it (409 `comment_permission_required`).
 */

export type CommentAction = 'reply' | 'hide' | 'delete';

export interface CommentTarget {
  post: PostRow & { platform_post_id: string };
  comment: CommentRow;
  account: AccountRow;
  ctx: PlatformContext;
}


/** The user's post and its account, and the comment asked for (absent when the post has no comment of that id). */
interface CommentRows {
  post: PostRow;
  account: AccountRow | undefined;
  commentId: string;
  comment: CommentRow | undefined;
}

export async function loadCommentTarget(
  rt: Pick<PostsRuntime, 'db' | 'config' | 'sealedBox'>,
  userId: string,
  postId: string,
  commentId: string,
  action: CommentAction,
): Promise<CommentTarget> {
  return checkCommentTarget(rt, await loadCommentRows(rt, userId, postId, commentId), action);
}

/**
 * What the checks read: 404 for another user's post before the comment is read. A repeated delete answers from these
 * alone (publishing-api.md: "the same 200"), whatever became of the connection or the flags since.
 */
export async function loadCommentRows(rt: Pick<PostsRuntime, 'db'>, userId: string, postId: string, commentId: string): Promise<CommentRows> {
  const found = await loadCommentablePostRows(rt.db, userId, postId);
  if (!found) throw postNotFound(postId);
  const comment = isUuid(commentId) ? await findCommentForUser(rt.db, userId, found.post.id, commentId) : undefined;
  return { ...found, commentId, comment };
}

/** The checks after the post's ownership, in the order listed above. */
export function checkCommentTarget(rt: Pick<PostsRuntime, 'config' | 'sealedBox'>, rows: CommentRows, action: CommentAction): CommentTarget {
  const { post, account, comment } = rows;
  const caps = commentCapabilitiesOrRefuse(post.platform, account, rt.config.comingSoon);
  // Deleting stays open on a deleted post: on x, Bluesky and Mastodon Herald's own reply outlives the post it
  // answered, and taking it down publishes nothing and costs nothing.
  if (action !== 'delete' && post.status !== 'published') {
    throw new ApiError('comments_unsupported', `${notPublishedReason(post.status)} Replying to its comments and hiding them need a published post.`);
  }
  if (!comment || post.platform_post_id === null) throw new ApiError('not_found', `Comment ${rows.commentId} was not found on post ${post.id}`);
  requireCapability(post, caps, action, comment);

  const name = platformName(post.platform);
  const ctx = account && account.inactive_reason !== 'disconnected' ? platformContextOf(rt.sealedBox, account) : null;
  // Disconnected is "account not found or not active" (404), as a reply from a switched-off account is below; 409 is
  // only for a connection that needs re-authorizing (publishing-api.md "Errors").
  if (!account || !ctx) {
    const message = `The ${name} account of this post was disconnected; reconnect it to ${action} comments.`;
    throw account ? new AccountNotActiveError(message) : new ApiError('not_found', message);
  }
  if (account.inactive_reason === 'connection_lost') {
    throw new ApiError('comment_permission_required', `${name} no longer accepts this account's connection; reconnect the account from the dashboard.`);
  }
  if (account.inactive_reason === 'reauthorization_required') throw new ApiError('comment_permission_required', reauthorizeSentence(name, account.active));
  // A reply is published like a post, and posting needs an active account; hiding and deleting do not.
  if (action === 'reply' && !account.active) {
    throw new AccountNotActiveError(`Account ${account.id} is not active; activate it to reply from it.`);
  }
  return { post: { ...post, platform_post_id: post.platform_post_id }, comment, account, ctx };
}

/** `postingWorks`: the account is still active (a withheld comment permission leaves posting alone unless it was switched off). */
export function reauthorizeSentence(name: string, postingWorks = true): string {
  return `The ${name} connection needs re-authorizing before Herald can act on comments; reconnect the account from the dashboard.${postingWorks ? ' Posting keeps working.' : ''}`;
}

/** publishing-api.md "Capabilities by platform": an action the platform lacks is refused, naming what it allows. */
function requireCapability(post: Pick<PostRow, 'platform' | 'thread_order'>, caps: CommentCapabilities, action: CommentAction, comment: CommentRow): void {
  const { platform } = post;
  const allowed = action === 'reply' ? caps.reply : action === 'hide' ? caps.hide : comment.own ? caps.deleteOwn : caps.deleteAny;
  if (allowed && action === 'hide' && caps.hideTopLevelOnly && comment.platform_parent_id !== null) {
    throw new ApiError('comment_action_unsupported', `${platformName(platform)} lets only top-level replies be hidden; this comment answers another comment.`);
  }
  if (allowed && action === 'hide' && hidesNothingOnPart(post, caps)) {
    throw new ApiError('comment_action_unsupported', `${platformName(platform)} lets only top-level replies be hidden; this comment answers a later part of a thread, which ${platformName(platform)} files under the part before it.`);
  }
  if (allowed) return;
  const refused = action === 'reply' ? 'replying to comments' : action === 'hide' ? 'hiding comments' : "deleting other people's comments";
  throw new ApiError('comment_action_unsupported', `${platformName(platform)} does not allow ${refused}; it allows ${allowedActions(caps)}.`);
}

function allowedActions(caps: CommentCapabilities): string {
  const actions = [
    caps.reply && 'replying',
    caps.hide && 'hiding',
    caps.deleteAny ? 'deleting any comment' : caps.deleteOwn && 'deleting your own replies',
  ].filter((a): a is string => typeof a === 'string');
  if (actions.length === 0) return 'reading comments only';
  return actions.length === 1 ? `only ${actions[0]}` : `${actions.slice(0, -1).join(', ')} and ${actions[actions.length - 1]}`;
}

/** The connected account as the author of what Herald publishes for it (first comments, replies). */
export function ownAuthor(account: Pick<AccountRow, 'username' | 'display_name' | 'platform_account_id'>): OwnCommentInput['author'] {
  return { handle: account.username, displayName: account.display_name ?? account.username, platformId: account.platform_account_id, avatarUrl: null };
}
