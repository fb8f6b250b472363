import { sql } from 'kysely';
import type { PostRow } from '../src/db/tables/posts';
import { AccountNotConnectedError, loadPlatformContext, markConnectionLost, publishingContextOf } from '../src/posts/accounts-port';
import { cancelPosts } from '../src/posts/cancel';
import { removeUnusedCopies } from '../src/posts/media-cleanup';
import { failureSentence, type PublishFailureKind } from '../src/posts/publish-outcome';
import { mediaIdsOf, publishRequestFor } from '../src/posts/publish-request';
import type { PostsRuntime } from '../src/posts/runtime';
import { platformName } from '../src/platforms/availability';
import { capabilities, deleteSupported } from '../src/platforms/capabilities';
import { isPlatformFailure, type PlatformSlug } from '../src/platforms/types';
import { refundQuota, spendQuota } from '../src/quota/quota';

/**
 * The activities of one thread's publication (`workflows/publish-thread.ts`). The thread's rows (one per part,
 * `thread_id` + `thread_order`) are the truth; every write is conditional on the status it expects, so a repeated
 * activity changes nothing. Only `publishThreadPart` and `removeThreadPart` reach a platform and report a platform
 * refusal as a value.
 */

export interface ThreadPartRef {
  postId: string;
  threadOrder: number;
}

export type ThreadClaim =
  | { kind: 'gone' }
  | { kind: 'wait'; until: number }
  | {
      kind: 'publish';
      scheduled: boolean;
      platform: PlatformSlug;
      /** The platform's name for messages (`X`, `Bluesky`...). */
      platformName: string;
      parts: ThreadPartRef[];
      /** The last part, when the thread carries a first comment (published under it). */
      firstCommentPostId: string | null;
      /** Whether this account can delete what it published (`deleteSupported`): without it no rollback is tried. */
      rollbackSupported: boolean;
    };

export type PartAttempt =
  | { ok: true; platformPostId: string; url: string | null }
  | { ok: false; kind: PublishFailureKind | 'not_publishing'; message: string; retryAfterSeconds: number | null };

/** `removed`: gone from the platform (or it had never heard of it). `refused`: the platform would not delete it. */
export type PartRemoval = 'removed' | 'refused';

export function createThreadActivities(rt: PostsRuntime) {
  const { db } = rt;

  const loadParts = (threadId: string) => db.selectFrom('posts').selectAll().where('thread_id', '=', threadId).orderBy('thread_order').execute();

  async function rollbackSupportedFor(row: PostRow): Promise<boolean> {
    const placement = typeof row.configuration?.placement === 'string' ? row.configuration.placement : undefined;
    const account = row.account_id ? await db.selectFrom('accounts').select('via').where('id', '=', row.account_id).executeTakeFirst() : undefined;
    return deleteSupported(row.platform, { via: account?.via ?? undefined, placement });
  }

  return {
    /**
     * Decides the next step from the rows: gone (deleted, cancelled, no rows), wait (the shared scheduled time or the
     * next retry), or publish. A scheduled thread due now becomes `publishing` as a whole, under row locks, so a
     * concurrent DELETE either cancels all of it first or finds it publishing.
     */
    async claimThread(input: { threadId: string; now: number; notBefore: number }): Promise<ThreadClaim> {
      return db.transaction().execute(async (trx): Promise<ThreadClaim> => {
        const rows = await trx.selectFrom('posts').selectAll().where('thread_id', '=', input.threadId).orderBy('thread_order').forUpdate().execute();
        if (rows.length === 0 || rows.some((r) => r.status !== rows[0]!.status) || (rows[0]!.status !== 'scheduled' && rows[0]!.status !== 'publishing')) {
          return { kind: 'gone' };
        }
        const first = rows[0]!;
        const due = Math.max(first.status === 'scheduled' ? (first.scheduled_at?.getTime() ?? 0) : 0, input.notBefore);
        if (due > input.now) return { kind: 'wait', until: due };
        if (first.status === 'scheduled') {
          await trx.updateTable('posts').set({ status: 'publishing', updated_at: sql`now()` }).where('thread_id', '=', input.threadId).where('status', '=', 'scheduled').execute();
        }
        const last = rows[rows.length - 1]!;
        return {
          kind: 'publish',
          scheduled: first.scheduled_at !== null,
          platform: first.platform,
          platformName: platformName(first.platform),
          parts: rows.map((r) => ({ postId: r.id, threadOrder: r.thread_order! })),
          firstCommentPostId: last.first_comment_text !== null && last.first_comment_status === 'pending' ? last.id : null,
          rollbackSupported: await rollbackSupportedFor(first),
        };
      });
    },

    /**
     * One part on the platform: a reply to the previous part where the platform has a reply chain, a standalone post
     * elsewhere. Its platform id is stored at once (the row stays `publishing`), so what is live is never only in
     * the workflow's memory.
     */
    async publishThreadPart(input: { postId: string; replyTo: { platformPostId: string; rootPlatformPostId: string } | null }): Promise<PartAttempt> {
      const row = await db.selectFrom('posts').selectAll().where('id', '=', input.postId).executeTakeFirst();
      if (!row || row.status !== 'publishing') return { ok: false, kind: 'not_publishing', message: 'The thread was cancelled while it published', retryAfterSeconds: null };
      const inactive: PartAttempt = { ok: false, kind: 'account_inactive', message: failureSentence(row.platform, 'account_inactive', ''), retryAfterSeconds: null };
      const ctx = await publishingContextOf(rt, row);
      if (!ctx) return inactive;
      const request = await publishRequestFor(rt, row);
      if (input.replyTo && capabilities[row.platform].nativeThreads) request.replyTo = input.replyTo;
      try {
        const published = await rt.adapters[row.platform].publish(ctx, request);
        await db
          .updateTable('posts')
          .set({ platform_post_id: published.platformPostId, platform_post_url: published.url, updated_at: sql`now()` })
          .where('id', '=', row.id)
          .where('status', '=', 'publishing')
          .execute();
        return { ok: true, platformPostId: published.platformPostId, url: published.url };
      } catch (err) {
        if (!isPlatformFailure(err)) throw err;
        rt.logger.warn({ postId: row.id, threadId: row.thread_id, platform: row.platform, kind: err.kind, detail: err.detail }, 'platform refused a thread part');
        return { ok: false, kind: err.kind, message: failureSentence(row.platform, err.kind, err.clientMessage), retryAfterSeconds: err.retryAfterSeconds ?? null };
      }
    },

    /** Compensation: deletes one published part. A post the platform no longer has counts as removed. */
    async removeThreadPart(input: { postId: string; platformPostId: string }): Promise<PartRemoval> {
      const row = await db.selectFrom('posts').selectAll().where('id', '=', input.postId).executeTakeFirst();
      if (!row?.account_id) return 'refused';
      let context;
      try {
        context = await loadPlatformContext(db, rt.sealedBox, row.account_id);
      } catch (err) {
        if (err instanceof AccountNotConnectedError) return 'refused';
        throw err;
      }
      try {
        await rt.adapters[row.platform].delete(context.ctx, input.platformPostId);
        return 'removed';
      } catch (err) {
        if (!isPlatformFailure(err)) throw err;
        if (err.kind === 'gone') return 'removed';
        rt.logger.warn({ postId: row.id, threadId: row.thread_id, platform: row.platform, kind: err.kind, detail: err.detail }, 'platform refused to delete a thread part');
        return 'refused';
      }
    },

    /** Every part went out: `published`, with their ids, and the thread's reservations spent (first comment aside). */
    async recordThreadPublished(input: { threadId: string; parts: Array<{ postId: string; platformPostId: string; url: string | null }>; publishedAt: number }): Promise<void> {
      await db.transaction().execute(async (trx) => {
        const ids: string[] = [];
        for (const part of input.parts) {
          const updated = await trx
            .updateTable('posts')
            .set({ status: 'published', platform_post_id: part.platformPostId, platform_post_url: part.url, published_at: new Date(input.publishedAt), error_message: null, updated_at: sql`now()` })
            .where('id', '=', part.postId)
            .where('status', '=', 'publishing')
            .executeTakeFirst();
          if (updated.numUpdatedRows > 0n) ids.push(part.postId);
        }
        await spendQuota(trx, ids, ['post', 'scheduled', 'x_link']);
      });
    },

    /**
     * An immediate thread that failed: no rows are kept (publishing-api.md "States and transitions" rule 2). Every
     * reservation is refunded first, downloaded media copies go, then the rows.
     */
    async discardThread(input: { threadId: string }): Promise<void> {
      const rows = await loadParts(input.threadId);
      if (rows.length === 0) return;
      const ids = rows.map((r) => r.id);
      await db.transaction().execute(async (trx) => {
        await refundQuota(trx, ids);
        await trx.deleteFrom('posts').where('thread_id', '=', input.threadId).where('status', '=', 'publishing').execute();
      });
      for (const row of rows) await removeUnusedCopies(rt, mediaIdsOf(row), row.id);
    },

    /** A scheduled thread whose attempt failed and was fully rolled back waits for its retry: `scheduled` again, retry_count + 1 on every part. */
    async requeueThread(input: { threadId: string }): Promise<void> {
      await db
        .updateTable('posts')
        .set({ status: 'scheduled', retry_count: sql`retry_count + 1`, platform_post_id: null, platform_post_url: null, updated_at: sql`now()` })
        .where('thread_id', '=', input.threadId)
        .where('status', '=', 'publishing')
        .execute();
    },

    /**
     * A scheduled thread that will not be retried: every part `failed` with the sentence, retry_count + 1, every
     * reservation refunded; the first comment is marked as not sent.
     */
    async failThread(input: { threadId: string; message: string }): Promise<void> {
      await db.transaction().execute(async (trx) => {
        const failed = await trx
          .updateTable('posts')
          .set({
            status: 'failed',
            error_message: input.message,
            retry_count: sql`retry_count + 1`,
            first_comment_status: sql`case when first_comment_text is null then null else 'failed' end`,
            first_comment_error: sql`case when first_comment_text is null then null else 'The thread was not published, so its first comment was not sent' end`,
            updated_at: sql`now()`,
          })
          .where('thread_id', '=', input.threadId)
          .where('status', '=', 'publishing')
          .returning('id')
          .execute();
        await refundQuota(trx, failed.map((r) => r.id));
      });
    },

    /**
     * The platform refused the account's credential while publishing the thread: as for a post, the account becomes
     * `connection_lost` and its scheduled posts and threads are cancelled with that reason. The thread itself fails
     * (or is discarded) as any refused thread does, since its rollback may have left parts live.
     */
    async handleThreadConnectionLost(input: { threadId: string }): Promise<void> {
      const part = await db.selectFrom('posts').select('account_id').where('thread_id', '=', input.threadId).executeTakeFirst();
      if (!part?.account_id) return;
      await markConnectionLost(db, part.account_id);
      await cancelPosts(rt, { accountId: part.account_id, reason: 'connection_lost' });
    },

    /** Downloaded copies of `media_urls` go once no post still waiting to publish uses them. */
    async cleanupThreadMedia(input: { threadId: string }): Promise<number> {
      let removed = 0;
      for (const row of await loadParts(input.threadId)) removed += await removeUnusedCopies(rt, mediaIdsOf(row), row.id);
      return removed;
    },
  };
}

export type ThreadActivities = ReturnType<typeof createThreadActivities>;
