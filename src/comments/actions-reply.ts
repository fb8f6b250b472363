import { createHash, randomUUID } from 'node:crypto';
import { sql, type Transaction } from 'kysely';
import type { Database, Db } from '../db';
import { inTransaction } from '../db/in-transaction';
import type { CommentRow } from '../db/tables/comments';
import { ApiError } from '../errors';
import { platformName } from '../platforms/availability';
import { replyParentOf } from '../platforms/comment-capabilities';
import { ListingMemo } from '../platforms/listed-comments';
import { isPlatformFailure, PlatformFailure, type CommentRead, type PublishedPost } from '../platforms/types';
import { refusalOf } from '../posts/publish-outcome';
import { checkReplyText, throwFirst, xLinkOutcome } from '../posts/rules';
import { chargedBefore, loadLimits, refundQuota, reserveQuota, spendQuota, type Charge } from '../quota/quota';
import { onPlatform, type CommentActionsRuntime } from './actions';
import { loadCommentTarget, ownAuthor, type CommentTarget } from './actions-target';
import { toCommentView, type CommentView } from './listing-view';
import { findCommentByPlatformId, findCommentForUser, insertOwnComment, markCommentReplied, recordedReplyPlatformIds } from './repository';
import { threadPartsOf } from './thread-listing';

/**
 * `POST /api/v1/posts/:id/comments/:comment_id/reply` (publishing-api.md): the reply is published as a post. Its
 * text follows the account's post limit (400 `validation_error`), an x link is refused on Free (402) or billed, and
 * one post of monthly quota is reserved before the platform is called (429 on Free when spent). The reservation is
 * spent with the stored reply, or refunded when nothing was published. The reply is stored at once with `own: true`
 * and the answered comment shows `replied: true`.
 *
 * Exactly once: the platform call is made once. When its answer is lost (`unknown_outcome`), the reply is looked
 * for among the post's comments on the platform before anything is reported; found, it is recorded as published,
 * otherwise the answer is 502 saying the outcome is unconfirmed (nothing charged), never a second send. A request
 * with an Idempotency-Key whose process stopped mid-call is retried (once its lease ends) under the same attempt:
 * the reply is looked for before it is sent again. So is the retry of a keyed attempt that answered 502 (a 5xx is not
 * kept for replay): an unconfirmed outcome may have published. A look that cannot tell (it fails, or the answered
 * comment lies further down than it reads) sends nothing: 502, the reservation returned (the 502 says nothing
 * changed) and the attempt left to the reconciler (`settleLeftReplies`), which charges the reply if it turns up.
 */
export async function replyToComment(
  rt: CommentActionsRuntime,
  userId: string,
  postId: string,
  commentId: string,
  text: string | undefined,
  options: { idempotencyKey?: string } = {},
): Promise<CommentView> {
  const target = await loadCommentTarget(rt, userId, postId, commentId, 'reply');
  if (target.comment.deleted) throw new ApiError('not_found', `Comment ${target.comment.id} was deleted; there is nothing to reply to.`);
  throwFirst(checkReplyText(target.account, text));
  const replyText = text!;
  const limits = await loadLimits(rt.db, userId);
  const links = xLinkOutcome(target.account, limits, [{ field: 'text', text: replyText }]);
  throwFirst(links.violations);

  // The reservation's id is the attempt's id (quota rows name what they charge; a reply is not a post row).
  const chargeId = replyAttemptId(userId, target.comment.id, replyText, options.idempotencyKey);
  const earlier = options.idempotencyKey ? await chargedBefore(rt.db, chargeId) : null;
  // Spent under the same Idempotency-Key: that attempt recorded the reply (or, its process stopped, the reconciler
  // did: `settleLeftReplies`) and its answer was lost with its process. The recorded reply is the answer; no send.
  if (earlier?.spent && target.comment.reply_comment_id) {
    const recorded = await findCommentForUser(rt.db, userId, target.post.id, target.comment.reply_comment_id);
    if (recorded) return toCommentView(recorded);
  }
  // Charged before under the same Idempotency-Key: that attempt's process stopped before it reported back (still
  // reserved), or it answered 502 and was refunded, maybe on an unconfirmed outcome (the refunded reservation is the
  // mark: which failure it was is not kept). It may have published: look first (below), and send only if nothing is there.
  if (!earlier?.reserved) {
    const charges = replyCharges(chargeId, links);
    await rt.db.transaction().execute(async (trx) => {
      // What the reservation charges, for the reconciler should this process stop before it settles
      // (`settleLeftReplies`); the reservation stays the transaction's last statement (it locks the user's month).
      await recordReplyAttempt(trx, { chargeId, userId, postId: target.post.id, commentId: target.comment.id, text: replyText });
      await reserveQuota(trx, { userId, limits, charges, now: rt.now() });
    });
  }

  const startedAt = rt.now();
  let published: PublishedPost;
  // Set when the reply may be out and no look could tell: the reservation then stays for `settleLeftReplies`.
  let untold = false;
  try {
    published = await onPlatform(rt, target, 'reply', async () => {
      try {
        const recovered = earlier ? await lookBeforeSending(rt, target, replyText, earlier.since) : null;
        return recovered ?? (await publishReply(rt, target, replyText, startedAt, chargeId));
      } catch (err) {
        untold = err instanceof ReplyUntold;
        throw err;
      }
    });
  } catch (err) {
    if (untold) await markReplyUntold(rt.db, { chargeId, userId, postId: target.post.id, commentId: target.comment.id, text: replyText });
    else await refundQuota(rt.db, [chargeId]);
    throw err;
  }

  return toCommentView(await recordReply(rt.db, target, published, replyText, startedAt, chargeId));
}

/**
 * Stores the published reply as an own comment, marks the answered comment replied and spends the attempt's
 * reservation, in one transaction: what a request does once the platform answered, and what the reconciler does for
 * a reply it found after the request's process stopped (`settleLeftReplies`).
 */
export async function recordReply(db: Db | Transaction<Database>, target: CommentTarget, published: PublishedPost, text: string, startedAt: Date, chargeId: string): Promise<CommentRow> {
  return inTransaction(db, async (trx) => {
    // A platform that deduplicates (Mastodon's Idempotency-Key on the same comment and text) may answer with a reply
    // this comment already got through Herald, stored and charged then: nothing new was published, nothing new is
    // charged. Not only its latest reply (`reply_comment_id`; all a row recorded before migration 0271 has to go by):
    // an older one, another reply made since, was charged too.
    const already = await findCommentByPlatformId(trx, target.post.id, published.platformPostId);
    const paidBy = already?.reply_charge_id ?? null;
    const repeated = (paidBy !== null && paidBy !== chargeId) || (already !== undefined && already.id === target.comment.reply_comment_id);
    const row = await insertOwnComment(trx, {
      postId: target.post.id,
      platform: target.post.platform,
      platformCommentId: published.platformPostId,
      platformParentId: replyParentOf(target.post.platform, target.comment),
      author: ownAuthor(target.account),
      text,
      createdAt: startedAt,
      replyChargeId: chargeId,
    });
    await markCommentReplied(trx, target.comment.id, row.id, startedAt);
    if (repeated) await refundQuota(trx, [chargeId]);
    else await spendQuota(trx, [chargeId]);
    return row;
  });
}

/** What a reply is charged (publishing-api.md: one post, plus the x link-post charge for an x link where billed). */
function replyCharges(chargeId: string, links: { billed: readonly unknown[] }): Charge[] {
  return [{ postId: chargeId, kind: 'post' }, ...links.billed.map(() => ({ postId: chargeId, kind: 'x_link' as const }))];
}

/**
 * A reply the reconciler found published after its request answered 502 unable to tell (`markReplyUntold` returned
 * its reservation): charged now and recorded, as `recordReply` does for a request, in one transaction that first
 * takes the attempt's mark. It is out on the platform, so Free's hard post limit does not refuse the charge (the
 * request reserved it within the limit; `outAlready`): the month's posts count it, past the limit if it filled
 * meanwhile, and Free records no overage. False when the mark is gone: a keyed retry took the attempt over (it
 * reserved again and looks on its own), so nothing is charged here.
 */
export async function recordFoundReply(db: Db, target: CommentTarget, published: PublishedPost, attempt: { chargeId: string; userId: string; text: string; startedAt: Date }, now: Date): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const marked = await trx.updateTable('reply_attempts').set({ untold_at: null }).where('charge_id', '=', attempt.chargeId).where('untold_at', 'is not', null).returning('charge_id').executeTakeFirst();
    if (!marked) return false;
    const limits = await loadLimits(trx, attempt.userId);
    const links = xLinkOutcome(target.account, limits, [{ field: 'text', text: attempt.text }]);
    await reserveQuota(trx, { userId: attempt.userId, limits, charges: replyCharges(attempt.chargeId, links), now, outAlready: true });
    await recordReply(trx, target, published, attempt.text, attempt.startedAt, attempt.chargeId);
    return true;
  });
}

/**
 * Records what a reply attempt's reservation charges (migration 0261). A keyed attempt whose reservation the
 * reconciler refunded can reserve again under the same id: it starts again.
 */
async function recordReplyAttempt(trx: Transaction<Database>, attempt: { chargeId: string; userId: string; postId: string; commentId: string; text: string }): Promise<void> {
  await trx
    .insertInto('reply_attempts')
    .values({ charge_id: attempt.chargeId, user_id: attempt.userId, post_id: attempt.postId, comment_id: attempt.commentId, text: attempt.text })
    .onConflict((oc) => oc.column('charge_id').doUpdateSet({ started_at: sql`now()`, looks: 0, next_look_at: null, untold_at: null }))
    .execute();
}

/**
 * The request answers 502 unable to tell whether the reply went out: its reservation is returned now, as for any
 * failed reply (publishing-api.md: 502 "nothing changed"; a failed post is never charged, reserved quota is returned
 * on any failure), and the attempt's row stays, marked, for the reconciler to keep looking (`settleLeftReplies`
 * charges the reply if it turns up). The reservation used to be held, counted in the month's usage, for up to a day.
 */
async function markReplyUntold(db: Db, attempt: { chargeId: string; userId: string; postId: string; commentId: string; text: string }): Promise<void> {
  await db.transaction().execute(async (trx) => {
    // The row is there unless a keyed retry met an earlier reservation written without one (before migration 0261).
    await trx
      .insertInto('reply_attempts')
      .values({ charge_id: attempt.chargeId, user_id: attempt.userId, post_id: attempt.postId, comment_id: attempt.commentId, text: attempt.text, untold_at: sql`now()` })
      .onConflict((oc) => oc.column('charge_id').doUpdateSet({ untold_at: sql`now()` }))
      .execute();
    await refundQuota(trx, [attempt.chargeId]);
  });
}

/**
 * The id of one reply attempt, and of its quota reservation. With an Idempotency-Key it is derived from it, so a
 * retry of a request whose process stopped mid-call finds the earlier attempt's reservation; without one, it is new.
 */
export function replyAttemptId(userId: string, commentId: string, text: string, idempotencyKey: string | undefined): string {
  if (idempotencyKey === undefined) return randomUUID();
  const hex = createHash('sha256').update(['comment-reply', userId, commentId, idempotencyKey, text].join('\n')).digest('hex');
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

async function publishReply(rt: CommentActionsRuntime, target: CommentTarget, text: string, startedAt: Date, attemptId: string): Promise<PublishedPost> {
  const adapter = rt.adapters[target.post.platform];
  try {
    return await adapter.replyToComment!(target.ctx, target.post.platform_post_id, target.comment.platform_comment_id, text, attemptId);
  } catch (err) {
    if (!isPlatformFailure(err) || err.kind !== 'unknown_outcome') throw err;
    let found: PublishedPost | null;
    try {
      found = await findUnrecordedReply(rt, target, text, startedAt);
    } catch (lookErr) {
      if (!isPlatformFailure(lookErr)) throw lookErr;
      throw new ReplyUntold(err.platform, `${unconfirmedReply(err.platform)} Herald could not tell from the post's comments either (${lookErr.clientMessage.replace(/\.$/, '')}); it keeps looking for up to a day, and the reply is charged only if it is found (the comment then shows it as its reply); otherwise nothing is charged.`, lookErr);
    }
    if (found) return found;
    throw new PlatformFailure(
      err.platform,
      'unknown_outcome',
      `${err.clientMessage.replace(/\.$/, '')}. The reply could not be found on the post afterwards, so nothing was charged; list the comments with sync=true before sending it again.`,
      undefined,
      err.detail,
    );
  }
}

/**
 * A reply that may have been published and that no look could confirm or rule out (the look failed, or the post has
 * more comments since the answered one than a look reads): nothing is sent again, its reservation is returned with the
 * 502 (`markReplyUntold`) and the reconciler keeps looking (`settleLeftReplies`: charged when found).
 */
class ReplyUntold extends PlatformFailure {
  constructor(platform: PlatformFailure['platform'], message: string, cause: PlatformFailure) {
    super(platform, 'unknown_outcome', message, cause.retryAfterSeconds, cause.detail);
  }
}

/** The sentence of an outcome not known (`refusalOf`'s, as for a post), for a reply. */
function unconfirmedReply(platform: PlatformFailure['platform']): string {
  return refusalOf(platform, 'unknown_outcome', '', null, 'reply').message;
}

/**
 * The reply an earlier attempt under the same Idempotency-Key may have published. A look that cannot tell (it fails,
 * or does not reach the answered comment) is no "not there": it answers 502 and nothing is sent; the reservation is
 * returned and the reconciler keeps looking (a refused credential keeps its own answer, 409).
 */
async function lookBeforeSending(rt: CommentActionsRuntime, target: CommentTarget, text: string, since: Date): Promise<PublishedPost | null> {
  try {
    return await findUnrecordedReply(rt, target, text, since);
  } catch (err) {
    if (!isPlatformFailure(err) || err.kind === 'reauthorize') throw err;
    const message = `${err.clientMessage.replace(/\.$/, '')}. Herald could not tell whether an earlier attempt with this Idempotency-Key published the reply on ${platformName(err.platform)}, so nothing was sent; that attempt is charged only if its reply is found (Herald keeps looking for up to a day). Send it again later with the same key.`;
    throw new ReplyUntold(err.platform, message, err);
  }
}

/**
 * Pages a look reads at most. It stops earlier once it has read the answered comment: listings are newest first (a
 * reply is newer than the comment it answers) or list a comment's replies with it (Instagram, LinkedIn), so what
 * comes after cannot be the reply.
 */
export const LOOKUP_PAGES = 10;
/** Clocks of Herald and the platform differ; a reply made by this attempt is not older than this before it. */
const CLOCK_SKEW_MS = 2 * 60_000;

/**
 * The account's own comment under the answered one, with the same text, made since this attempt started and not
 * already recorded as the reply of a comment: what the lost call published, if anything. (A refresh may have stored
 * it meanwhile, as any own comment; recording it keeps that row's id.) Null only when the look read the listing to its
 * end or to the answered comment; one that reads `LOOKUP_PAGES` pages before either cannot tell (a `PlatformFailure`,
 * as a look the platform fails). It used to read 3 pages and call whatever they missed "not there": on a busy post
 * the reply was refunded though published, and a keyed retry sent it again.
 */
export async function findUnrecordedReply(rt: CommentActionsRuntime, target: CommentTarget, text: string, startedAt: Date): Promise<PublishedPost | null> {
  const adapter = rt.adapters[target.post.platform];
  if (!adapter.listComments) return null;
  const parent = replyParentOf(target.post.platform, target.comment);
  const recorded = await recordedReplyPlatformIds(rt.db, target.post.id);
  // One fetch of a whole-thread listing (Bluesky, Mastodon) for all the pages this look reads.
  const parts = await threadPartsOf(rt.db, target.post);
  const read: CommentRead = { thread: parts ? { rootPlatformPostId: parts[0]! } : undefined, memo: new ListingMemo() };
  let cursor: string | undefined;
  for (let page = 0; page < LOOKUP_PAGES; page++) {
    const result = await adapter.listComments(target.ctx, target.post.platform_post_id, cursor, read);
    let passedParent = false;
    for (const c of result.comments) {
      if (c.platformCommentId === parent) passedParent = true;
      if (!c.own || c.text.trim() !== text.trim() || c.platformParentId !== parent) continue;
      if (new Date(c.createdAt).getTime() < startedAt.getTime() - CLOCK_SKEW_MS) continue;
      if (!recorded.has(c.platformCommentId)) return { platformPostId: c.platformCommentId, url: null };
    }
    if (!result.nextCursor || passedParent) return null;
    cursor = result.nextCursor;
  }
  const name = platformName(target.post.platform);
  throw new PlatformFailure(target.post.platform, 'unknown_outcome', `${name} lists more comments on this post since the answered one than one look reads (${LOOKUP_PAGES} pages).`);
}

