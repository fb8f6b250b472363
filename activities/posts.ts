import { sql } from 'kysely';
import { CredentialRenewalPending, markConnectionLost, publishingContextOf } from '../src/posts/accounts-port';
import { cancelPosts } from '../src/posts/cancel';
import { failureSentence, type PublishFailureKind } from '../src/posts/publish-outcome';
import { sendFirstComment } from '../src/posts/first-comment';
import { removeUnusedCopies } from '../src/posts/media-cleanup';
import { mediaIdsOf, publishRequestFor } from '../src/posts/publish-request';
import type { PostsRuntime } from '../src/posts/runtime';
import { refundQuota } from '../src/quota/quota';
import { isPlatformFailure } from '../src/platforms/types';

/**
 * The activities of one post's publication (`workflows/publish-post.ts`). Each is one bounded step; the database row
 * is the truth and every write is conditional on the status it expects, so a repeated activity changes nothing.
 * Only `publishToPlatform` and `publishFirstComment` reach a platform; they run once per call (the workflow owns the
 * retries) and report a platform refusal as a value, never as an activity failure.
 */

export type ClaimResult =
  | { kind: 'gone' }
  | { kind: 'wait'; until: number }
  | { kind: 'publish'; scheduled: boolean; hasFirstComment: boolean };

export type PublishAttempt =
  /** `recorded`: the row already says `published` (else the workflow records it); the follow-ups this post needs. */
  | { ok: true; platformPostId: string; url: string | null; recorded: boolean; hasFirstComment: boolean; hasMedia: boolean }
  /** `awaitingCredential`: the account's credential ended and is being renewed (a scheduled post waits for it). */
  | { ok: false; kind: PublishFailureKind; message: string; retryAfterSeconds: number | null; awaitingCredential?: boolean }
  /** The row is no longer `publishing` (deleted meanwhile): nothing was sent. */
  | { ok: false; kind: 'not_publishing' };

export function createPostActivities(rt: PostsRuntime) {
  const { db } = rt;

  async function loadRow(postId: string) {
    return db.selectFrom('posts').selectAll().where('id', '=', postId).executeTakeFirst();
  }

  /**
   * Marks a platform call as begun and returns the `publishing` row, with whether an earlier call never reported
   * back (its marker still set). One statement: the subquery reads the row as it was before this update.
   */
  async function beginAttempt(postId: string) {
    return db
      .updateTable('posts')
      .set({ publish_attempt_started_at: sql`now()` })
      .where('id', '=', postId)
      .where('status', '=', 'publishing')
      .returningAll()
      .returning(sql<boolean>`(select earlier.publish_attempt_started_at is not null from posts earlier where earlier.id = posts.id)`.as('earlier_attempt_open'))
      .executeTakeFirst();
  }

  /** The platform answered with a refusal: nothing is live, so the next attempt need not look first. */
  async function endAttempt(postId: string): Promise<void> {
    await db.updateTable('posts').set({ publish_attempt_started_at: null }).where('id', '=', postId).execute();
  }

  /** One statement (atomic without a transaction): the row becomes `published` and its reservations are spent. */
  async function recordPublished(postId: string, outcome: { platformPostId: string; url: string | null; publishedAt: number }): Promise<void> {
    await db
      .with('published', (qb) =>
        qb
          .updateTable('posts')
          .set({
            status: 'published',
            platform_post_id: outcome.platformPostId,
            platform_post_url: outcome.url,
            published_at: new Date(outcome.publishedAt),
            error_message: null,
            updated_at: sql`now()`,
          })
          .where('id', '=', postId)
          .where('status', '=', 'publishing')
          .returning('id'),
      )
      .updateTable('quota_reservations')
      .set({ state: 'spent', updated_at: sql`now()` })
      .where('post_id', 'in', (qb) => qb.selectFrom('published').select('id'))
      .where('kind', 'in', ['post', 'scheduled', 'x_link'])
      .where('state', '=', 'reserved')
      .execute();
  }

  const activities = {
    /**
     * Decides the next step from the row: gone (deleted, cancelled, no row: the workflow ends), wait (until the
     * scheduled time or the next retry), or publish (a scheduled post due now becomes `publishing` here).
     * `now` is the workflow's clock, so timers and this check agree (also under time skipping).
     */
    async claimPost(input: { postId: string; now: number; notBefore: number }): Promise<ClaimResult> {
      const row = await loadRow(input.postId);
      if (!row || (row.status !== 'scheduled' && row.status !== 'publishing')) return { kind: 'gone' };
      const hasFirstComment = row.first_comment_text !== null && row.first_comment_status === 'pending';
      if (row.status === 'publishing') {
        if (input.notBefore > input.now) return { kind: 'wait', until: input.notBefore };
        return { kind: 'publish', scheduled: row.scheduled_at !== null, hasFirstComment };
      }
      const due = Math.max(row.scheduled_at?.getTime() ?? 0, input.notBefore);
      if (due > input.now) return { kind: 'wait', until: due };
      const claimed = await db
        .updateTable('posts')
        .set({ status: 'publishing', updated_at: sql`now()` })
        .where('id', '=', input.postId)
        .where('status', '=', 'scheduled')
        .executeTakeFirst();
      if (claimed.numUpdatedRows === 0n) return { kind: 'gone' };
      return { kind: 'publish', scheduled: true, hasFirstComment };
    },

    /**
     * One create on the platform, then the row is recorded `published` in the same activity (one round trip on the
     * hot path). A recording that fails after the platform took the post is reported `recorded: false`, and the
     * workflow records it with the retried `recordPublished`, so the platform is never asked twice.
     * An earlier call that never reported back (see migration 0050) may have published: the platform is asked first
     * where it can be; where it cannot and a repeat could duplicate, the outcome is reported unknown, never resent.
     * `now` is the workflow's clock at the attempt; `published_at` is that plus the time the call took.
     */
    async publishToPlatform(input: { postId: string; now: number }): Promise<PublishAttempt> {
      const started = Date.now();
      const row = await beginAttempt(input.postId);
      if (!row) return { ok: false, kind: 'not_publishing' };
      const refusal = (kind: PublishFailureKind, clientMessage: string, retryAfterSeconds: number | null = null) => ({
        ok: false as const,
        kind,
        message: failureSentence(row.platform, kind, clientMessage),
        retryAfterSeconds,
      });
      const ctx = await publishingContextOf(rt, row);
      if (!ctx) return refusal('account_inactive', '');
      const request = await publishRequestFor(rt, row);
      const adapter = rt.adapters[row.platform];
      let published;
      try {
        if (row.earlier_attempt_open && !adapter.findPublished && !adapter.repeatedCreatesAreSafe) return refusal('unknown_outcome', '');
        const found = row.earlier_attempt_open && adapter.findPublished ? await adapter.findPublished(ctx, request) : null;
        published = found ?? (await adapter.publish(ctx, request));
      } catch (err) {
        if (!isPlatformFailure(err)) throw err;
        rt.logger.warn({ postId: row.id, platform: row.platform, kind: err.kind, detail: err.detail }, 'platform refused a post');
        if (err.kind !== 'unknown_outcome') await endAttempt(row.id);
        if (err instanceof CredentialRenewalPending) return { ...refusal(err.kind, err.clientMessage), awaitingCredential: true };
        return refusal(err.kind, err.clientMessage, err.retryAfterSeconds ?? null);
      }
      const outcome = { platformPostId: published.platformPostId, url: published.url, publishedAt: input.now + (Date.now() - started) };
      const recorded = await recordPublished(row.id, outcome).then(
        () => true,
        (err) => {
          rt.logger.error({ err, postId: row.id }, 'published, but the row could not be recorded yet; the workflow records it');
          return false;
        },
      );
      return {
        ok: true,
        platformPostId: published.platformPostId,
        url: published.url,
        recorded,
        hasFirstComment: row.first_comment_text !== null && row.first_comment_status === 'pending',
        hasMedia: mediaIdsOf(row).length > 0,
      };
    },

    /**
     * The first attempt of every post of an immediate fan-out, in one activity (one dispatch instead of 25). A post
     * whose attempt failed outside the platform (a database error) is reported `error`, and the workflow attempts it
     * again on its own; its mark in the row keeps that second attempt from sending blindly.
     */
    async publishGroupToPlatforms(input: { postIds: string[]; now: number }): Promise<Record<string, PublishAttempt | { ok: false; kind: 'error' }>> {
      const attempts = await Promise.allSettled(input.postIds.map((postId) => activities.publishToPlatform({ postId, now: input.now })));
      return Object.fromEntries(
        input.postIds.map((postId, i) => {
          const settled = attempts[i]!;
          if (settled.status === 'fulfilled') return [postId, settled.value];
          rt.logger.error({ err: settled.reason, postId }, 'a first attempt of a group failed outside the platform; it is attempted again alone');
          return [postId, { ok: false as const, kind: 'error' as const }];
        }),
      );
    },

    /** The platform took it: `published`, quota spent. Idempotent (only a `publishing` row changes). */
    async recordPublished(input: { postId: string; platformPostId: string; url: string | null; publishedAt: number }): Promise<void> {
      await recordPublished(input.postId, input);
    },

    /**
     * A failed attempt: `retry_count` goes up. Final: `failed` with the sentence, every reservation refunded.
     * Otherwise the post waits for its retry as `requeue` (`scheduled` for a scheduled post, as the spec shows it).
     */
    async recordFailedAttempt(input: { postId: string; message: string; final: boolean; requeue: 'scheduled' | 'publishing' }): Promise<void> {
      await db.transaction().execute(async (trx) => {
        const updated = await trx
          .updateTable('posts')
          .set({
            status: input.final ? 'failed' : input.requeue,
            error_message: input.final ? input.message : null,
            retry_count: sql`retry_count + 1`,
            publish_attempt_started_at: null,
            first_comment_status: input.final ? sql`case when first_comment_text is null then null else 'failed' end` : sql`first_comment_status`,
            first_comment_error: input.final ? sql`case when first_comment_text is null then null else 'The post was not published, so its first comment was not sent' end` : sql`first_comment_error`,
            updated_at: sql`now()`,
          })
          .where('id', '=', input.postId)
          .where('status', '=', 'publishing')
          .executeTakeFirst();
        if (input.final && updated.numUpdatedRows > 0n) await refundQuota(trx, [input.postId]);
      });
    },

    /**
     * A scheduled post whose account credential is being renewed waits for it as `scheduled`, its `retry_count`
     * untouched (decisions.md "Keeping credentials alive": it waits rather than failing for a token Herald can renew).
     */
    async awaitCredential(input: { postId: string }): Promise<void> {
      await db
        .updateTable('posts')
        .set({ status: 'scheduled', publish_attempt_started_at: null, updated_at: sql`now()` })
        .where('id', '=', input.postId)
        .where('status', '=', 'publishing')
        .execute();
    },

    /**
     * The platform no longer accepts the account's credential: the account becomes `connection_lost` and its
     * scheduled posts are cancelled with that reason (this one too when it was scheduled). An immediate post fails
     * with the platform's sentence.
     */
    async handleConnectionLost(input: { postId: string; scheduled: boolean; message: string }): Promise<void> {
      const row = await loadRow(input.postId);
      if (!row) return;
      if (!input.scheduled) {
        await activities.recordFailedAttempt({ postId: input.postId, message: input.message, final: true, requeue: 'publishing' });
      } else {
        // This scheduled post was claimed (`publishing`) when the platform refused the credential: cancelled like the rest.
        await db.transaction().execute(async (trx) => {
          const cancelled = await trx
            .updateTable('posts')
            .set({ status: 'deleted', error_message: 'connection_lost', updated_at: sql`now()` })
            .where('id', '=', input.postId)
            .where('status', '=', 'publishing')
            .executeTakeFirst();
          if (cancelled.numUpdatedRows > 0n) await refundQuota(trx, [input.postId]);
        });
      }
      if (row.account_id === null) return;
      await markConnectionLost(db, row.account_id);
      await cancelPosts(rt, { accountId: row.account_id, reason: 'connection_lost' });
    },

    /** The first comment under the published post; a failure never touches the post. Quota: spent or refunded. */
    async publishFirstComment(input: { postId: string }): Promise<'posted' | 'failed' | 'skipped'> {
      return (await sendFirstComment(rt, input.postId)).status;
    },

    /** Downloaded copies of `media_urls` go once no post still waiting to publish uses them; uploads are kept. */
    async cleanupPostMedia(input: { postId: string }): Promise<number> {
      const row = await loadRow(input.postId);
      if (!row) return 0;
      return removeUnusedCopies(rt, mediaIdsOf(row), row.id);
    },
  };
  return activities;
}

export type PostActivities = ReturnType<typeof createPostActivities>;
