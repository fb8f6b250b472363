import { sql } from 'kysely';
import { ownAuthor } from '../comments/actions-target';
import { insertOwnComment, type OwnCommentInput } from '../comments/repository';
import { ApiError } from '../errors';
import { isPlatformFailure } from '../platforms/types';
import { loadLimits, refundQuota, reserveQuota, type Charge } from '../quota/quota';
import { AccountNotConnectedError, loadPlatformContext } from './accounts-port';
import { failureSentence, type PublishFailureKind } from './publish-outcome';
import { findOwnPost, getPostView } from './read';
import type { RouteResult } from './route-result';
import { xLinkOutcome } from './rules';
import type { PostsRuntime } from './runtime';

class InterruptedAttempt extends Error {}

export type FirstCommentOutcome =
  | { status: 'posted' }
  | { status: 'failed'; kind: PublishFailureKind; message: string; retryAfterSeconds: number | null }
  | { status: 'skipped' };

/**
 * Publishes a post's pending first comment under it, once (publishing-api.md "First comment status"): `posted` with
 * the platform's id and its reservations spent, or `failed` with a worded reason and its reservations refunded. The
 * post itself is never touched. Only a `pending` comment on a published post is sent.
 */
export async function sendFirstComment(rt: PostsRuntime, postId: string): Promise<FirstCommentOutcome> {
  // Marks the attempt and reads the row in one statement; the subquery sees the mark as it was before (migration 0053).
  const row = await rt.db
    .updateTable('posts')
    .set({ first_comment_attempt_started_at: sql`now()` })
    .where('id', '=', postId)
    .where('status', '=', 'published')
    .where('first_comment_status', '=', 'pending')
    .where('first_comment_text', 'is not', null)
    .where('platform_post_id', 'is not', null)
    .returningAll()
    .returning(sql<boolean>`(select earlier.first_comment_attempt_started_at is not null from posts earlier where earlier.id = posts.id)`.as('earlier_attempt_open'))
    .executeTakeFirst();
  if (!row || row.first_comment_text === null || !row.platform_post_id) return { status: 'skipped' };
  let outcome: { ok: true; id: string; author: OwnCommentInput['author'] } | { ok: false; kind: PublishFailureKind; message: string; retryAfterSeconds: number | null };
  try {
    if (row.account_id === null) throw new AccountNotConnectedError('', 'disconnected');
    // An earlier call never reported back: it may have posted, and comments cannot be looked up the way posts are.
    if (row.earlier_attempt_open) throw new InterruptedAttempt();
    const { account, ctx } = await loadPlatformContext(rt.db, rt.sealedBox, row.account_id);
    const published = await rt.adapters[row.platform].publish(ctx, {
      postId: `${row.id}:first-comment`,
      text: row.first_comment_text,
      media: [],
      replyTo: { platformPostId: row.platform_post_id, rootPlatformPostId: row.platform_post_id },
    });
    outcome = { ok: true, id: published.platformPostId, author: ownAuthor(account) };
  } catch (err) {
    if (isPlatformFailure(err)) {
      outcome = { ok: false, kind: err.kind, message: failureSentence(row.platform, err.kind, err.clientMessage, 'first comment'), retryAfterSeconds: err.retryAfterSeconds ?? null };
    } else if (err instanceof InterruptedAttempt) {
      outcome = { ok: false, kind: 'unknown_outcome', message: failureSentence(row.platform, 'unknown_outcome', '', 'first comment'), retryAfterSeconds: null };
    } else if (err instanceof AccountNotConnectedError) {
      outcome = { ok: false, kind: 'account_inactive', message: failureSentence(row.platform, 'account_inactive', '', 'first comment'), retryAfterSeconds: null };
    } else throw err;
  }
  await rt.db.transaction().execute(async (trx) => {
    // The comment joins the post's stored comments at once (decisions.md "Comments"), so `first_comment.comment_id`
    // is usable with the comment routes without waiting for a refresh.
    const stored = outcome.ok
      ? await insertOwnComment(trx, {
          postId: row.id,
          platform: row.platform,
          platformCommentId: outcome.id,
          platformParentId: null,
          author: outcome.author,
          text: row.first_comment_text!,
          createdAt: rt.now(),
        })
      : null;
    await trx
      .updateTable('posts')
      .set(
        outcome.ok
          ? { first_comment_status: 'posted', first_comment_platform_id: outcome.id, first_comment_comment_id: stored!.id, first_comment_error: null, updated_at: sql`now()` }
          : { first_comment_status: 'failed', first_comment_error: outcome.message, updated_at: sql`now()` },
      )
      .where('id', '=', row.id)
      .where('first_comment_status', '=', 'pending')
      .execute();
    if (outcome.ok) {
      await trx.updateTable('quota_reservations').set({ state: 'spent', updated_at: sql`now()` }).where('post_id', '=', row.id).where('kind', 'in', ['first_comment', 'x_link_first_comment']).where('state', '=', 'reserved').execute();
    } else {
      await refundQuota(trx, [row.id], ['first_comment', 'x_link_first_comment']);
    }
  });
  return outcome.ok ? { status: 'posted' } : { status: 'failed', kind: outcome.kind, message: outcome.message, retryAfterSeconds: outcome.retryAfterSeconds };
}

/**
 * `POST /api/v1/posts/:id/first-comment`: re-sends the stored text of a `failed` first comment on a published post.
 * The attempt is claimed (`failed` → `pending`) with its quota reserved in one transaction, so two concurrent retries
 * cannot both send. Platform refusal: 502 `first_comment_failed` (429 `first_comment_rate_limited` when throttled).
 */
export async function retryFirstComment(rt: PostsRuntime, userId: string, postId: string): Promise<RouteResult> {
  const row = await findOwnPost(rt.db, userId, postId);
  if (row.first_comment_text === null) throw new ApiError('first_comment_not_found', 'This post has no first comment to retry');
  if (row.status !== 'published') throw new ApiError('first_comment_not_retryable', `The post is ${row.status}; a first comment can be retried only once the post is published`);
  if (row.first_comment_status === 'posted') throw new ApiError('first_comment_not_retryable', 'The first comment is already posted');
  if (row.first_comment_status !== 'failed') throw new ApiError('first_comment_not_retryable', 'Another attempt at this first comment is in flight; read the post again shortly');

  const limits = await loadLimits(rt.db, userId);
  const links = row.account_id ? await linkCharge(rt, row.account_id, limits, row.first_comment_text) : [];
  await rt.db.transaction().execute(async (trx) => {
    const claimed = await trx
      .updateTable('posts')
      .set({ first_comment_status: 'pending', first_comment_error: null, first_comment_attempt_started_at: null, updated_at: sql`now()` })
      .where('id', '=', row.id)
      .where('first_comment_status', '=', 'failed')
      .executeTakeFirst();
    if (claimed.numUpdatedRows === 0n) throw new ApiError('first_comment_not_retryable', 'Another attempt at this first comment is in flight; read the post again shortly');
    const charges: Charge[] = [{ postId: row.id, kind: 'first_comment' }, ...links.map(() => ({ postId: row.id, kind: 'x_link_first_comment' as const }))];
    await reserveQuota(trx, { userId, limits, now: rt.now(), charges });
  });
  const outcome = await sendFirstComment(rt, row.id);
  if (outcome.status === 'failed') {
    if (outcome.kind === 'rate_limited') {
      const headers: Record<string, string> = outcome.retryAfterSeconds ? { 'Retry-After': String(Math.ceil(outcome.retryAfterSeconds)) } : {};
      throw new ApiError('first_comment_rate_limited', `${outcome.message} The post is unaffected; retry the first comment later.`, {}, headers);
    }
    throw new ApiError('first_comment_failed', outcome.message);
  }
  return { status: 200, body: { data: await getPostView(rt.db, row.id) } };
}

async function linkCharge(rt: PostsRuntime, accountId: string, limits: Awaited<ReturnType<typeof loadLimits>>, text: string): Promise<string[]> {
  const account = await rt.db.selectFrom('accounts').select(['platform', 'own_credentials']).where('id', '=', accountId).executeTakeFirst();
  if (!account) return [];
  const outcome = xLinkOutcome(account, limits, [{ field: 'first_comment', text }]);
  if (outcome.violations[0]) throw new ApiError(outcome.violations[0].code, outcome.violations[0].message);
  return outcome.billed;
}
