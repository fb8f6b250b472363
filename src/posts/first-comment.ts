import { AccountNotActiveError } from '../accounts/not-active';
import { ownAuthor } from '../comments/actions-target';
import type { OwnCommentInput } from '../comments/repository';
import type { AccountRow } from '../db/tables/accounts';
import type { PostRow } from '../db/tables/posts';
import { ApiError } from '../errors';
import { claimRecordOf } from '../idempotency/key-claim';
import { isPlatformFailure } from '../platforms/types';
import { loadLimits, reserveQuota, type Charge } from '../quota/quota';
import { AccountNotConnectedError, accountOfPost, publishingContextOfClaimed } from './accounts-port';
import { refusalFromFailure, refusalOf, type PublishFailureKind, type Refusal } from './publish-outcome';
import { untilMadeSettled } from './made-settled';
import type { PostView } from './post-view';
import { findOwnPost, getPostView } from './read';
import * as firstComments from './first-comment-repository';
import { firstCommentNotSent } from './first-comment-not-sent';
import { xLinkOutcome } from './rules';
import type { PostsRuntime } from './runtime';

class InterruptedAttempt extends Error {}

/** Whether the post carries a first comment still to be sent once the post is published. */
export function hasPendingFirstComment(row: Pick<PostRow, 'first_comment_text' | 'first_comment_status'>): boolean {
  return row.first_comment_text !== null && row.first_comment_status === 'pending';
}

/** A user's retry of a first comment: posted (the post as it now is), or refused by the platform (the post is unaffected). */
export type FirstCommentRetry =
  | { kind: 'posted'; post: PostView }
  | { kind: 'comment_refused'; rateLimited: boolean; message: string; retryAfterSeconds: number | null };

type FirstCommentOutcome =
  | { status: 'posted' }
  | { status: 'failed'; kind: PublishFailureKind; message: string; retryAfterSeconds: number | null }
  | { status: 'skipped' };

/**
 * Publishes a post's pending first comment under it, once (publishing-api.md "First comment status"): `posted` with
 * the platform's id and its reservations spent, or `failed` with a worded reason and its reservations refunded. The
 * post itself is never touched. Only a `pending` comment on a published post is sent. `signal`: the activity's stop
 * (`PublishRequest.signal`); a comment stopped before its create is `failed` as not sent, its quota refunded.
 */
export async function sendFirstComment(rt: PostsRuntime, postId: string, signal?: AbortSignal): Promise<FirstCommentOutcome> {
  // The mark reads the account's credentials and author columns with the row: no read of its own.
  const row = await firstComments.beginFirstCommentAttempt(rt.db, postId);
  if (!row || row.first_comment_text === null || !row.platform_post_id) return { status: 'skipped' };
  let outcome: { ok: true; id: string; author: OwnCommentInput['author'] } | Refusal;
  try {
    if (row.account_id === null) throw new AccountNotConnectedError('', 'disconnected');
    // An earlier call never reported back: it may have posted, and comments cannot be looked up the way posts are.
    if (row.earlier_attempt_open) throw new InterruptedAttempt();
    const ctx = publishingContextOfClaimed(rt, row);
    if (ctx === null) throw new AccountNotConnectedError(row.account_id, 'disconnected');
    const published = await rt.adapters[row.platform].publish(ctx, {
      postId: `${row.id}:first-comment`,
      text: row.first_comment_text,
      media: [],
      replyTo: { platformPostId: row.platform_post_id, rootPlatformPostId: row.platform_post_id },
      ...(signal ? { signal } : {}),
    });
    outcome = {
      ok: true,
      id: published.platformPostId,
      author: ownAuthor({ username: row.account_username!, display_name: row.account_display_name, platform_account_id: row.account_platform_account_id! }),
    };
  } catch (err) {
    if (isPlatformFailure(err)) outcome = refusalFromFailure(row.platform, err, 'first comment');
    else if (err instanceof InterruptedAttempt) outcome = refusalOf(row.platform, 'unknown_outcome', '', null, 'first comment');
    else if (err instanceof AccountNotConnectedError) outcome = refusalOf(row.platform, 'account_inactive', '', null, 'first comment');
    else throw err;
  }
  // The comment joins the post's stored comments at once (decisions.md "Comments"), so `first_comment.comment_id`
  // is usable with the comment routes without waiting for a refresh.
  await firstComments.recordFirstCommentOutcome(
    rt.db,
    row.id,
    outcome.ok
      ? { ok: true, marked: row, comment: { postId: row.id, platform: row.platform, platformCommentId: outcome.id, platformParentId: null, author: outcome.author, text: row.first_comment_text, createdAt: rt.now() } }
      : outcome,
  );
  return outcome.ok ? { status: 'posted' } : { status: 'failed', kind: outcome.kind, message: outcome.message, retryAfterSeconds: outcome.retryAfterSeconds };
}

/**
 * `POST /api/v1/posts/:id/first-comment`: re-sends the stored text of a `failed` first comment on a published post.
 * The attempt is claimed (`failed` → `pending`) with its quota reserved in one transaction, so two concurrent retries
 * cannot both send. Answers the post with its comment posted, or the platform's refusal of the comment.
 */
export async function retryFirstComment(rt: PostsRuntime, userId: string, postId: string): Promise<FirstCommentRetry> {
  const row = await findOwnPost(rt.db, userId, postId);
  if (row.first_comment_text === null) throw new ApiError('first_comment_not_found', 'This post has no first comment to retry');
  if (row.status !== 'published') throw new ApiError('first_comment_not_retryable', `The post is ${row.status}; a first comment can be retried only once the post is published`);
  if (row.first_comment_status === 'posted') throw new ApiError('first_comment_not_retryable', 'The first comment is already posted');
  if (row.first_comment_status === 'pending') return settleAbandonedAttempt(rt, row);

  // Only an account that can post sends it (publishing-api.md: 404 for an account "not found or not active"), and
  // nothing is reserved for one that cannot.
  const account = row.account_id === null ? undefined : await accountOfPost(rt.db, row.account_id);
  if (!account) throw new ApiError('not_found', 'The account of this post was disconnected; its first comment can no longer be sent');
  if (!account.active) throw new AccountNotActiveError(`Account ${account.id} is not active; reconnect it or switch it on to retry the first comment`);
  const limits = await loadLimits(rt.db, userId);
  const links = linkCharge(account, limits, row.first_comment_text);
  // Under an Idempotency-Key, the reopened attempt is recorded in the reservation's statement, for a retry after a
  // crash to answer from (`answerMadeFirstComment`) instead of meeting the comment `pending` or `posted` (409).
  const claimed = claimRecordOf({ post_id: row.id } satisfies MadeFirstComment);
  await rt.db.transaction().execute(async (trx) => {
    if (!(await firstComments.reopenFirstComment(trx, row.id))) throw new ApiError('first_comment_not_retryable', 'Another attempt at this first comment is in flight; read the post again shortly');
    const charges: Charge[] = [{ postId: row.id, kind: 'first_comment' }, ...links.map(() => ({ postId: row.id, kind: 'x_link_first_comment' as const }))];
    await reserveQuota(trx, { userId, limits, now: rt.now(), charges, claimed });
  });
  const outcome = await sendFirstComment(rt, row.id);
  if (outcome.status === 'failed') return { kind: 'comment_refused', rateLimited: outcome.kind === 'rate_limited', message: outcome.message, retryAfterSeconds: outcome.retryAfterSeconds };
  if (outcome.status === 'skipped') {
    // The post stopped being published (deleted) between the claim and the send: nothing was sent, nothing is kept.
    await firstComments.failPendingFirstComment(rt.db, row.id, firstCommentNotSent.noLongerPublished);
    throw noLongerPublished();
  }
  return { kind: 'posted', post: await getPostView(rt.db, row.id) };
}

function noLongerPublished(): ApiError {
  return new ApiError('first_comment_not_retryable', 'The post is no longer published; a first comment can be retried only on a published post');
}

/** What a keyed retry made, as recorded under its Idempotency-Key claim (`claimRecordOf`): the attempt it reopened. */
export interface MadeFirstComment {
  post_id: string;
}

/**
 * The answer of a keyed retry whose process died after it reopened the comment, before its answer was stored: given
 * to the retry with the same key that took the claim over, from the comment once its attempt settled, as
 * `retryFirstComment` answers (posted: the post; refused: the sentence the comment keeps; the post gone: 409). An
 * attempt nobody will finish is failed as unconfirmed once abandoned, as the retry's own path does; until then the
 * wait ends in 409 `idempotency_in_progress` (`untilMadeSettled`), what was made kept for the next retry. Left: a
 * comment the platform throttled answers 502 `first_comment_failed`, not 429 with `Retry-After` (the kind of refusal
 * is not kept on the row; neither answer is stored, and either asks for a later retry).
 */
export async function answerMadeFirstComment(rt: PostsRuntime, userId: string, made: MadeFirstComment): Promise<FirstCommentRetry> {
  const pending = await findOwnPost(rt.db, userId, made.post_id);
  if (pending.first_comment_status === 'pending' && pending.status === 'published') {
    const abandoned = await abandonedAttemptRefusal(rt, pending);
    if (abandoned) return abandoned;
    await untilMadeSettled(rt, [made.post_id]);
  }
  const row = await findOwnPost(rt.db, userId, made.post_id);
  if (row.first_comment_status === 'posted') return { kind: 'posted', post: await getPostView(rt.db, row.id) };
  if (row.first_comment_status === 'failed' && row.first_comment_error !== firstCommentNotSent.noLongerPublished) {
    return { kind: 'comment_refused', rateLimited: false, message: row.first_comment_error ?? '', retryAfterSeconds: null };
  }
  throw noLongerPublished();
}

/**
 * How long a `pending` first comment's attempt may go unanswered before it is taken as abandoned: longer than the
 * workflow's first-comment activity may run (10 minutes), so no call can still be out.
 */
export const ABANDONED_AFTER_MS = 15 * 60_000;

/**
 * A retry of a `pending` first comment: an attempt is in flight (409), unless it began so long ago that nobody will
 * finish it (its process died mid-call or before calling). Then it is `failed` as unconfirmed, its quota returned,
 * and answered as the platform's refusal would be: it may have been posted, so it is not sent again unasked.
 */
async function settleAbandonedAttempt(rt: PostsRuntime, row: PostRow): Promise<FirstCommentRetry> {
  const abandoned = await abandonedAttemptRefusal(rt, row);
  if (abandoned) return abandoned;
  throw new ApiError('first_comment_not_retryable', 'Another attempt at this first comment is in flight; read the post again shortly');
}

/** A `pending` comment's attempt failed as unconfirmed when abandoned (`ABANDONED_AFTER_MS`), answered so; else null. */
async function abandonedAttemptRefusal(rt: PostsRuntime, row: PostRow): Promise<FirstCommentRetry | null> {
  const unconfirmed = refusalOf(row.platform, 'unknown_outcome', '', null, 'first comment');
  if (!(await firstComments.failPendingFirstComment(rt.db, row.id, unconfirmed.message, { staleForMs: ABANDONED_AFTER_MS }))) return null;
  return { kind: 'comment_refused', rateLimited: false, message: unconfirmed.message, retryAfterSeconds: null };
}

function linkCharge(account: AccountRow, limits: Awaited<ReturnType<typeof loadLimits>>, text: string): string[] {
  const outcome = xLinkOutcome(account, limits, [{ field: 'first_comment', text }]);
  if (outcome.violations[0]) throw new ApiError(outcome.violations[0].code, outcome.violations[0].message);
  return outcome.billed;
}
