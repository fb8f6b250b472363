import { sql } from 'kysely';
import type { FirstCommentStatus } from '../db/tables/posts';

/**
 * A first comment its post's fate settles without any attempt of its own (publishing-api.md "First comment status":
 * `pending` → `failed`, error set): the post failed, was cancelled or deleted before it went out, or was deleted once
 * published but before its comment went out. Written in the same update as the post's own change, so the post's
 * event (`post.failed`, `post.cancelled`, `post.deleted`) already shows the comment `failed`; no `first_comment.failed`
 * of its own (README "Events and webhooks": that event reports the comment's own attempt).
 */
export const firstCommentNotSent = {
  notPublished: 'The post was not published, so its first comment was not sent',
  cancelled: 'The post was cancelled before it was published, so its first comment was not sent',
  noLongerPublished: 'The post is no longer published, so its first comment was not sent',
} as const;

/** The charges of a first comment (a link in it on x carries the second). */
export const firstCommentCharges = ['first_comment', 'x_link_first_comment'] as const;

/**
 * The columns of an update that fails a still-`pending` first comment with `sentence`; a comment already posted or
 * failed, and a post without one, are left as they are. Its charges are the caller's to refund in the same transaction.
 */
export function failPendingCommentColumns(sentence: string) {
  return {
    first_comment_status: sql<FirstCommentStatus | null>`case when first_comment_status = 'pending' then 'failed' else first_comment_status end`,
    first_comment_error: sql<string | null>`case when first_comment_status = 'pending' then ${sentence}::text else first_comment_error end`,
  };
}
