import { accountEndOfClaimed, cancellationOfClaimed, publishingContextOfClaimed } from '../src/posts/accounts-port';
import { hasPendingFirstComment } from '../src/posts/first-comment';
import { linkOf, storedLinkOf } from '../src/posts/post-link';
import { removeCopiesOfCancelled } from '../src/posts/media-cleanup';
import { mayBeLiveAccountEnded, refusalOf, type Refusal } from '../src/posts/publish-outcome';
import { mediaIdsOf } from '../src/posts/publish-request';
import * as attemptMarks from '../src/posts/attempt-marks';
import * as attemptOutcomes from '../src/posts/attempt-outcomes';
import { findPost } from '../src/posts/view-queries';
import type { PostsRuntime } from '../src/posts/runtime';
import { requestOrRefusal, sendMarked } from './platform-attempt';
import type { PostRow } from '../src/db/tables/posts';
import type { PlatformContext, PostLink } from '../src/platforms/types';
import type { PostView } from '../src/posts/post-view';

/** What one attempt at the platform reports (the workflow decides what follows). */
export type PublishAttempt =
  /** `recorded`: the row already says `published` (else the workflow records it); the follow-ups this post needs. */
  | ({ ok: true; platformPostId: string; recorded: boolean; hasFirstComment: boolean; hasMedia: boolean } & PostLink)
  /** `awaitingCredential`: the account's credential ended and is being renewed (a scheduled post waits for it). */
  | (Refusal & { awaitingCredential?: boolean })
  /** The row is no longer `publishing` (deleted meanwhile): nothing was sent. */
  | { ok: false; kind: 'not_publishing' };

/**
 * An attempt that finds its account switched off (or gone) while an earlier call of it never reported back: that
 * call may have published, and nothing will look now, so the post is neither cancelled nor said "not sent". It is
 * an `unknown_outcome` (never retried: the workflow fails it, refunded) with the sentence of an account's end met
 * so (`mayBeLiveAccountEnded`), or the usual unconfirmed one when the account is still on (its credentials unread).
 * A thread's part is met the same way (`activities/thread-parts.ts`): the workflow fails the thread, never cancels it.
 */
export function mayBeLiveWithAccountOff(row: attemptMarks.MarkedPost): Refusal {
  const reason = accountEndOfClaimed(row);
  return reason ? { ok: false, kind: 'unknown_outcome', message: mayBeLiveAccountEnded(reason), retryAfterSeconds: null } : refusalOf(row.platform, 'unknown_outcome');
}

/**
 * One post's attempt at the platform and its recording, for the activities of `activities/posts.ts` (one post's, a
 * held post's at its instant, a group's): the mark, the platform call (`sendMarked`), then `published` recorded with
 * its event, or the refusal to report.
 */
export function createPostSender(rt: PostsRuntime) {
  const { db } = rt;

  /**
   * One create on the platform, not yet recorded: a refusal (or a row no longer `publishing`) as the attempt to
   * report, or what the platform took with the outcome to record. The callers record it (one post, or a group's
   * together) and report `recorded: false` when that failed, so the workflow records it and never sends again.
   */
  async function sendOnce(
    postId: string,
    now: number,
    begun?: { row: attemptMarks.MarkedPost | undefined; ctx: PlatformContext | null },
  ): Promise<PublishAttempt | { attempt: Omit<Extract<PublishAttempt, { ok: true }>, 'recorded'>; outcome: Omit<attemptOutcomes.OutcomeToRecord, 'postId'> & { marked: attemptMarks.MarkedPost } }> {
    const started = Date.now();
    // The mark returns the account's credentials too (one statement, not a mark and a read).
    const row = begun ? begun.row : await attemptMarks.beginPublishAttempt(db, postId);
    if (!row) return publishedAlready(await findPost(db, postId));
    const ctx = begun ? begun.ctx : publishingContextOfClaimed(rt, row);
    if (!ctx) return row.earlier_attempt_open ? mayBeLiveWithAccountOff(row) : ((await cancelledWithAccount(row)) ?? refusalOf(row.platform, 'account_inactive'));
    const prepared = await requestOrRefusal(rt, row);
    if ('refusal' in prepared) return prepared.refusal;
    const sent = await sendMarked(rt, row, ctx, prepared.request);
    if ('refusal' in sent) return sent.refusal;
    const { published } = sent;
    return {
      attempt: {
        ok: true,
        platformPostId: published.platformPostId,
        ...linkOf(published),
        hasFirstComment: hasPendingFirstComment(row),
        hasMedia: mediaIdsOf(row).length > 0,
      },
      // The marked row goes with the outcome: its recording and event are then one statement (`recordPublishedAll`).
      outcome: { platformPostId: published.platformPostId, ...linkOf(published), publishedAt: now + (Date.now() - started), marked: row },
    };
  }

  /**
   * A scheduled post (its time set; a retry's attempt too) whose account is found switched off at its attempt is
   * cancelled with the account's reason, as the account's own cancellation does (publishing-api.md status table:
   * `scheduled` → account disconnected / deactivated / credential lost → `deleted`, `post.cancelled`), and reported
   * `not_publishing` (the workflow ends). That cancellation missed it: it failed after the account's change committed,
   * or the post was created while the change was being made. Its media copies go as a cancelled post's do. An
   * immediate post, or an account still on whose credentials cannot be read, is a failed attempt as before.
   */
  async function cancelledWithAccount(row: attemptMarks.MarkedPost): Promise<PublishAttempt | undefined> {
    const reason = cancellationOfClaimed(row);
    if (reason === null) return undefined;
    if (await attemptOutcomes.cancelClaimed(db, row.id, reason)) await removeCopiesOfCancelled(rt, [row.id]);
    return { ok: false, kind: 'not_publishing' };
  }

  /**
   * The recording after the platform took the post(s): true, or false with the failure logged (the workflow records
   * them). This process's change feed is told what was recorded in one statement, as committed: a request here
   * waiting for those posts answers from their views, without a read (`PostChangeFeed.recording`).
   */
  async function recordTaken(outcomes: Parameters<typeof attemptOutcomes.recordPublishedAll>[1]): Promise<boolean> {
    const postIds = outcomes.map((outcome) => outcome.postId);
    const recorded = rt.changes?.recording(postIds);
    let views: PostView[] = [];
    try {
      views = await attemptOutcomes.recordPublishedAll(db, outcomes);
      return true;
    } catch (err) {
      rt.logger.error({ err, postIds }, 'published, but the row could not be recorded yet; the workflow records it');
      return false;
    } finally {
      recorded?.(views);
    }
  }

  /**
   * The recordings of a fan-out's first attempts, made as their platforms answer rather than once the last one has:
   * `answered` is called once per attempt (with what the platform took, or nothing: a refusal, a failure) and resolves
   * with whether that post was recorded. The answers of one turn of the event loop go in one statement
   * (`setImmediate`, no timer); while one is in flight the next answers wait for it and go together, unless no call is
   * outstanding any more: the last answers then go at once. So what is left after the slowest platform answers is the
   * recording of the posts it answered for, not of all of them (README "Publish path cost", 2026-12-07 night).
   */
  function recordingAsAnswered(expected: number): { answered(outcome?: Parameters<typeof recordTaken>[0][number]): Promise<boolean> } {
    let outstanding = expected;
    let inFlight = 0;
    let flushing = false;
    let queued: Array<{ outcome: Parameters<typeof recordTaken>[0][number]; done: (recorded: boolean) => void }> = [];
    const flush = () => {
      flushing = false;
      if (queued.length === 0 || (inFlight > 0 && outstanding > 0)) return;
      const batch = queued;
      queued = [];
      inFlight += 1;
      void recordTaken(batch.map((entry) => entry.outcome)).then((recorded) => {
        inFlight -= 1;
        for (const entry of batch) entry.done(recorded);
        flush();
      });
    };
    return {
      answered(outcome) {
        outstanding -= 1;
        const recorded = outcome ? new Promise<boolean>((done) => queued.push({ outcome, done })) : Promise.resolve(false);
        if (!flushing && (queued.length > 0 || outstanding === 0)) {
          flushing = true;
          setImmediate(flush);
        }
        return recorded;
      },
    };
  }

  /** `publishToPlatform`, from a row already marked when `begun` is given. */
  async function sendAndRecord(postId: string, now: number, begun?: { row: attemptMarks.MarkedPost; ctx: PlatformContext | null }): Promise<PublishAttempt> {
    const attempt = await sendOnce(postId, now, begun);
    if (!('outcome' in attempt)) return attempt;
    const recorded = await recordTaken([{ postId, ...attempt.outcome }]);
    return { ...attempt.attempt, recorded };
  }

  /**
   * An attempt that finds its row no longer `publishing`: `published` already (an earlier run of this attempt, or a
   * run lost after it recorded the post: an embedded Temporal restarted, a worker lost, a group failing on another
   * post) is reported as taken and recorded, with the follow-ups still due, so the workflow sends a first comment
   * still `pending` (its mark decides: one found begun is failed as unconfirmed, never sent twice) and cleans the
   * media; anything else (deleted, failed) is `not_publishing`.
   */
  function publishedAlready(row: PostRow | undefined): PublishAttempt {
    if (row?.status !== 'published' || row.platform_post_id === null) return { ok: false, kind: 'not_publishing' };
    const link = storedLinkOf(row);
    return { ok: true, platformPostId: row.platform_post_id, ...link, recorded: true, hasFirstComment: hasPendingFirstComment(row), hasMedia: mediaIdsOf(row).length > 0 };
  }

  return { sendOnce, sendAndRecord, recordingAsAnswered };
}
