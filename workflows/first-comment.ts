import { bookkeeping, platformCall } from './post-steps';

/**
 * A published post's first comment that the run which recorded the post never sent (that run lost: the embedded
 * Temporal restarted, its worker gone, a group failing on another post), started by the reconciler once the comment
 * has stayed `pending` for minutes with no workflow of the post's running (`reconcilePosts`). Workflow id
 * `first-comment-<postId>`. The comment's mark decides, as for any first comment (`sendFirstComment`): one never
 * begun is sent, one begun and never reported back is `failed` as unconfirmed, never sent twice; then the post's
 * downloaded media copies are cleaned, as after a publish.
 */
export async function sendPendingFirstComment(input: { postId: string }): Promise<'posted' | 'failed' | 'skipped'> {
  const outcome = await platformCall.publishFirstComment({ postId: input.postId });
  await bookkeeping.cleanupPostMedia({ postId: input.postId });
  return outcome;
}
