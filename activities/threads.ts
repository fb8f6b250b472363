import { AccountNotConnectedError, loadPlatformContext, markConnectionLost, renewalOverdueMessage } from '../src/posts/accounts-port';
import * as attemptMarks from '../src/posts/attempt-marks';
import { retryStateOf } from '../src/posts/attempt-outcomes';
import { removeUnusedCopies } from '../src/posts/media-cleanup';
import { mediaIdsOf } from '../src/posts/publish-request';
import { cancelScheduledPosts } from '../src/posts/cancel-scheduled';
import { findPost } from '../src/posts/view-queries';
import type { PostsRuntime } from '../src/posts/runtime';
import * as threads from '../src/threads/repository';
import { loadThreadParts, threadAccountId, type ThreadPartRow } from '../src/threads/reads';
import { isPlatformFailure, type PostLink } from '../src/platforms/types';
import type { CredentialWait } from './posts';
import { createThreadParts, sharedStatus, type PartAttempt, type ReplyTo, type ThreadClaim, type ThreadStep } from './thread-parts';
import { createThreadRollback } from './thread-rollback';

export type { PartAttempt, ThreadClaim, ThreadStep } from './thread-parts';
export type { UnconfirmedPart } from './thread-rollback';

/**
 * The activities of one thread's publication (`workflows/publish-thread.ts`): each is a call of
 * `src/threads/repository.ts` (the thread's rows are the truth; every write is conditional on the status it expects,
 * so a repeated activity changes nothing) and, for `publishThreadPart` and `removeThreadPart`, one adapter call, whose
 * refusal is reported as a value; `publishThreadNow` sends an immediate thread's parts one after the other.
 */

/** `removed`: gone from the platform (or it had never heard of it). `refused`: the platform would not delete it. */
export type PartRemoval = 'removed' | 'refused';

export function createThreadActivities(rt: PostsRuntime) {
  const { db } = rt;

  const { publishClaimOf, sendPart, sendAndRecord } = createThreadParts(rt);

  /**
   * The platform refused the account's credential while publishing the thread: as for a post, the account becomes
   * `connection_lost` and its scheduled posts and threads are cancelled with that reason. The thread itself fails
   * (or, immediate, is discarded) as any refused thread does when its rollback left parts live or nobody scheduled
   * it; otherwise it is cancelled first (`cancelThreadForLostConnection`).
   */
  async function handleThreadConnectionLost(input: { threadId: string }): Promise<void> {
    const accountId = await threadAccountId(db, input.threadId);
    if (!accountId) return;
    await markConnectionLost(db, accountId);
    await cancelScheduledPosts(rt, { accountId, reason: 'connection_lost' });
  }

  /**
   * Decides the next step from the rows: gone (deleted, cancelled, no rows), wait (the shared scheduled time or the
   * next retry, both read from the rows; `notBefore`: the wait of a run from before they kept it), or publish, with
   * the rows' retry state (`retry`). A scheduled thread due now becomes `publishing` as a whole, under row locks, so a
   * concurrent DELETE either cancels all of it first or finds it publishing. The account is read after the commit:
   * a claim holds a connection for its transaction, and a read on another one inside it let threads due together
   * take the whole pool, each waiting for a connection another held (`test/threads/claim-pool.test.ts`).
   */
  async function claimThread(input: { threadId: string; now: number; notBefore?: number }): Promise<ThreadClaim> {
    const decided = await db.transaction().execute(async (trx): Promise<ThreadClaim | ThreadPartRow[]> => {
      const rows = await loadThreadParts(trx, input.threadId, { lock: true });
      const status = sharedStatus(rows);
      if (status !== 'scheduled' && status !== 'publishing') return { kind: 'gone' };
      const retry = retryStateOf(rows[0]!);
      const due = Math.max(status === 'scheduled' ? (rows[0]!.scheduled_at?.getTime() ?? 0) : 0, retry.notBefore, input.notBefore ?? 0);
      if (due > input.now) return { kind: 'wait', until: due, retry, scheduleVersion: rows[0]!.schedule_version };
      if (status === 'publishing') {
        // Taken over with another run's part call maybe still on its way (the old run's hold claimed it, then the
        // run was terminated or lost): the part's look waits until that call can no longer land, as a post's does
        // (`claimPost`): looked for sooner, it is not found and is sent a second time. A retry's wait (no hold).
        const inFlightUntil = Math.max(...rows.map(attemptMarks.callInFlightUntil));
        if (inFlightUntil > input.now) return { kind: 'wait', until: inFlightUntil, retry: { ...retry, notBefore: Math.max(retry.notBefore, inFlightUntil) } };
      }
      if (status === 'scheduled') await threads.claimScheduledThread(trx, input.threadId);
      return rows;
    });
    return Array.isArray(decided) ? publishClaimOf(decided) : decided;
  }

  return {
    claimThread,

    /** Compensation: the part the thread stopped at, looked for and deleted when its send went out unanswered. */
    ...createThreadRollback(rt),

    /**
     * An immediate thread, its request waiting (a local activity: no workflow activation between its parts): its rows
     * read (they are `publishing` from their insert, which no request changes, so no lock), every part sent one after
     * the other (`sendInOrder`) and, when all went out, the record. It reports what a hold does (`ThreadStep`), and
     * the workflow goes on from there. A read that fails is left to the workflow's claim, with retries.
     */
    async publishThreadNow(input: { threadId: string }): Promise<ThreadStep> {
      let rows: ThreadPartRow[];
      try {
        rows = await loadThreadParts(db, input.threadId);
      } catch (err) {
        rt.logger.warn({ err, threadId: input.threadId }, 'reading an immediate thread failed; the workflow claims it with retries');
        return { claim: null };
      }
      if (sharedStatus(rows) !== 'publishing') return { claim: { kind: 'gone' } };
      const claim = publishClaimOf(rows);
      return { claim, ...(await sendAndRecord(input.threadId, claim.parts, Date.now)) };
    },

    /** One part on the platform, if the thread is still `publishing` (`sendPart`). */
    async publishThreadPart(input: { postId: string; replyTo: ReplyTo }): Promise<PartAttempt> {
      return sendPart(input.postId, input.replyTo);
    },

    /** Compensation: deletes one published part. A post the platform no longer has counts as removed. */
    async removeThreadPart(input: { postId: string; platformPostId: string }): Promise<PartRemoval> {
      const row = await findPost(db, input.postId);
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
    async recordThreadPublished(input: { threadId: string; parts: Array<{ postId: string; platformPostId: string } & PostLink>; publishedAt: number }): Promise<void> {
      await threads.recordThreadPublished(db, input.parts.map((part) => ({ ...part, publishedAt: input.publishedAt })));
    },

    /**
     * An immediate thread that failed: no rows are kept (publishing-api.md "States and transitions" rule 2). Every
     * reservation is refunded first, downloaded media copies go, then the rows.
     */
    async discardThread(input: { threadId: string; message?: string; rollback?: unknown }): Promise<void> {
      const rows = await loadThreadParts(db, input.threadId);
      if (rows.length === 0) return;
      const failure = input.message === undefined ? null : { message: input.message, rollback: input.rollback };
      await threads.discardThread(db, input.threadId, rows.map((r) => r.id), failure);
      for (const row of rows) await removeUnusedCopies(rt, mediaIdsOf(row), row.id);
    },

    /**
     * A scheduled thread whose attempt failed and was fully rolled back waits for its retry: `scheduled` again,
     * retry_count + 1 on every part, the retry's time (`retryAt`) in `next_attempt_at`.
     */
    async requeueThread(input: { threadId: string; retryAt?: number }): Promise<void> {
      await threads.requeueThread(db, input.threadId, input.retryAt);
    },

    /**
     * A scheduled thread, fully rolled back, whose account's credential ended and is being renewed: `scheduled`
     * again without spending a retry, looked at again at `retryAt`, for up to `CREDENTIAL_WAIT_LIMIT_MS` past its
     * time; then not waiting, with the sentence its failed attempts carry.
     */
    async awaitThreadCredential(input: { threadId: string; retryAt: number; now: number }): Promise<CredentialWait> {
      if (await threads.requeueThreadAwaitingCredential(db, input.threadId, input)) return { waiting: true };
      const [row] = await loadThreadParts(db, input.threadId);
      return { waiting: false, message: renewalOverdueMessage(row?.platform ?? '', 'thread') };
    },

    /**
     * A scheduled thread that will not be retried: every part `failed` with the sentence, retry_count + 1, every
     * reservation refunded; the first comment is marked as not sent.
     */
    async failThread(input: { threadId: string; message: string; rollback?: { still_live: Array<{ platform_post_id: string }> } }): Promise<void> {
      await threads.failThread(db, input.threadId, input.message, input.rollback ?? null);
    },

    /**
     * The platform refused the account's credential while a scheduled thread published and nothing of it is live: the
     * thread is cancelled as the account's other scheduled posts are (`deleted`, `connection_lost`, quota returned),
     * then the account is marked and those posts cancelled (`handleThreadConnectionLost`).
     */
    async cancelThreadForLostConnection(input: { threadId: string }): Promise<void> {
      await threads.cancelClaimedThread(db, input.threadId, 'connection_lost');
      await handleThreadConnectionLost(input);
    },

    handleThreadConnectionLost,

    /** Downloaded copies of `media_urls` go once no post still waiting to publish uses them. */
    async cleanupThreadMedia(input: { threadId: string }): Promise<number> {
      let removed = 0;
      for (const row of await loadThreadParts(db, input.threadId)) removed += await removeUnusedCopies(rt, mediaIdsOf(row), row.id);
      return removed;
    },
  };
}

export type ThreadActivities = ReturnType<typeof createThreadActivities>;
