import { markConnectionLost, publishingContextOfClaimed, renewalOverdueMessage } from '../src/posts/accounts-port';
import { hasPendingFirstComment, sendFirstComment } from '../src/posts/first-comment';
import { failPendingFirstComment } from '../src/posts/first-comment-repository';
import { firstCommentNotSent } from '../src/posts/first-comment-not-sent';
import { InstantClaims } from '../src/posts/instant-claims';
import { removeUnusedCopies } from '../src/posts/media-cleanup';
import { mediaIdsOf } from '../src/posts/publish-request';
import * as attemptMarks from '../src/posts/attempt-marks';
import * as attemptOutcomes from '../src/posts/attempt-outcomes';
import { cancelScheduledPosts } from '../src/posts/cancel-scheduled';
import { findPost } from '../src/posts/view-queries';
import { mayBeLiveAccountEnded } from '../src/posts/publish-outcome';
import type { PostsRuntime } from '../src/posts/runtime';
import { holdUntilInstant } from './held';
import { sendStopOfActivity } from './send-stop';
import { createPostSender, type PublishAttempt } from './post-send';
import type { PostRow } from '../src/db/tables/posts';
import type { PostLink } from '../src/platforms/types';

/**
 * The activities of one post's publication (`workflows/publish-post.ts`): each is a call of the posts' repository
 * (`src/posts/attempt-marks.ts`, `attempt-outcomes.ts`: every write conditional on the status it expects, so a
 * repeated activity changes nothing) and, for `publishToPlatform` and `publishFirstComment` only, one adapter call.
 * Those run once per call (the workflow owns the retries) and report a platform refusal as a value, never as an
 * activity failure.
 */

/**
 * `retry`: the row's retry state (`RetryState`), which the workflow takes as its own; absent from a claim made up
 * without a read of the row (a new post's first wait) and from claims made before the row kept it.
 * `scheduleVersion`: the row's `schedule_version` (migration 0252), which a hold for `until` is given and its claim
 * requires; absent from claims made before the row kept it (they read version 0: see `claimAllScheduledAt`).
 */
export type ClaimResult =
  | { kind: 'gone' }
  | { kind: 'wait'; until: number; retry?: attemptOutcomes.RetryState; scheduleVersion?: number }
  | { kind: 'publish'; scheduled: boolean; hasFirstComment: boolean; retry?: attemptOutcomes.RetryState };

/**
 * A claim's input. `notBefore`: the earliest next attempt as a run that keeps it itself passes it (runs from before
 * the row kept it, `next_attempt_at`); the row's own is always read.
 */
interface ClaimInput {
  postId: string;
  now: number;
  notBefore?: number;
}

/** What one attempt at the platform reports (`activities/post-send.ts`, where it is made). */
export type { PublishAttempt } from './post-send';

/** A scheduled post's wait for its account's renewal: on, or over with the sentence its attempts now fail with. */
export type CredentialWait = { waiting: true } | { waiting: false; message: string };

/** Held posts of one instant claimed per statement (`InstantClaims`). */
const HELD_CLAIMS_PER_STATEMENT = 100;

export function createPostActivities(rt: PostsRuntime) {
  const { db } = rt;
  const heldClaims = new InstantClaims((postIds, at, versions) => attemptMarks.claimAllScheduledAt(db, postIds, at, versions), HELD_CLAIMS_PER_STATEMENT);

  const { sendOnce, sendAndRecord, recordingAsAnswered } = createPostSender(rt);

  /**
   * A row recorded `published` by another run (one lost after its record, or the hold of a terminated run) whose
   * follow-ups may not have run: its first comment still to be sent, or media copies to clean up. Its claim is a
   * `publish` that finds it so (`publishedAlready`), so the workflow does them rather than ending `gone`; the
   * comment's mark decides whether it is sent, and a cleanup made already removes nothing more.
   */
  function awaitsFollowUp(row: PostRow | undefined): boolean {
    return row?.status === 'published' && (hasPendingFirstComment(row) || mediaIdsOf(row).length > 0);
  }

  /** What a hold that did not get its claim reports (see `publishWhenDue`). */
  function claimSeenBy(row: PostRow | undefined): ClaimResult | null {
    // Published by another run with its follow-ups left: the workflow's claim takes it on (`claimPost`).
    if (awaitsFollowUp(row)) return null;
    if (!row || (row.status !== 'scheduled' && row.status !== 'publishing')) return { kind: 'gone' };
    const until = attemptOutcomes.waitingUntil(row);
    if (row.status === 'publishing' || until === null) return null;
    return { kind: 'wait', until, retry: attemptOutcomes.retryStateOf(row), scheduleVersion: row.schedule_version };
  }

  /** `publishWhenDue` at its instant: the exact-time claim, then the send and the record. */
  async function claimHeldAndSend(input: { postId: string; dueAt: number; scheduleVersion?: number }): Promise<{ claim: ClaimResult | null; attempt?: PublishAttempt }> {
    let begun: Awaited<ReturnType<typeof heldClaims.claim>>;
    try {
      // A hold without a version was started from a read made before the row kept one: version 0 then.
      begun = await heldClaims.claim(input.postId, input.dueAt, input.scheduleVersion ?? 0);
      if (!begun) {
        const seen = claimSeenBy(await findPost(db, input.postId));
        // Still due at `dueAt` yet not taken (a time the exact match cannot meet, or a version moved since the hold
        // was given it): no claim, so the workflow's claim by time takes it rather than holding again for the same
        // instant. A stale hold reports the same, to a workflow that no longer listens.
        return { claim: seen?.kind === 'wait' && seen.until === input.dueAt ? null : seen };
      }
    } catch (err) {
      rt.logger.warn({ err, postId: input.postId }, 'claiming a held post failed; the workflow claims it again with retries');
      return { claim: null };
    }
    const claim: ClaimResult = { kind: 'publish', scheduled: true, hasFirstComment: hasPendingFirstComment(begun), retry: attemptOutcomes.retryStateOf(begun) };
    // `published_at` from the instant the send began: `dueAt` in time-skipped tests, the worker's clock otherwise.
    return { claim, attempt: await sendAndRecord(input.postId, Math.max(input.dueAt, Date.now()), { row: begun, ctx: publishingContextOfClaimed(rt, begun) }) };
  }

  const activities = {
    /**
     * Decides the next step from the row: gone (deleted, cancelled, published, no row: the workflow ends), wait
     * (until the scheduled time or the next retry, both read from the row), or publish (a scheduled post due now
     * becomes `publishing` here; a published one whose first comment is still `pending` is taken on for it). Every
     * answer but gone carries the row's retry state (`retry`).
     * `now` is the workflow's clock, so timers and this check agree (also under time skipping).
     */
    async claimPost(input: ClaimInput): Promise<ClaimResult> {
      const row = await findPost(db, input.postId);
      // Recorded `published` by a run that did not live to send its first comment or clean its media: the attempt
      // finds it so (`publishedAlready`) and the workflow does them.
      if (awaitsFollowUp(row)) return { kind: 'publish', scheduled: row!.scheduled_at !== null, hasFirstComment: hasPendingFirstComment(row!), retry: attemptOutcomes.retryStateOf(row!) };
      if (!row || (row.status !== 'scheduled' && row.status !== 'publishing')) return { kind: 'gone' };
      const hasFirstComment = hasPendingFirstComment(row);
      const retry = attemptOutcomes.retryStateOf(row);
      const retryDue = Math.max(retry.notBefore, input.notBefore ?? 0);
      const due = row.status === 'publishing' ? retryDue : Math.max(row.scheduled_at?.getTime() ?? 0, retryDue);
      if (due > input.now) return { kind: 'wait', until: due, retry, scheduleVersion: row.schedule_version };
      if (row.status === 'publishing') {
        // Taken over with another run's call maybe still on its way (the old run's hold claimed it, then the run was
        // terminated or lost): the look waits until that call can no longer land, as a retry's wait (no hold).
        const inFlightUntil = attemptMarks.callInFlightUntil(row);
        if (inFlightUntil > input.now) return { kind: 'wait', until: inFlightUntil, retry: { ...retry, notBefore: Math.max(retry.notBefore, inFlightUntil) } };
        return { kind: 'publish', scheduled: row.scheduled_at !== null, hasFirstComment, retry };
      }
      if (!(await attemptMarks.claimScheduled(db, input.postId))) return { kind: 'gone' };
      return { kind: 'publish', scheduled: true, hasFirstComment, retry };
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
      return sendAndRecord(input.postId, input.now);
    },

    /**
     * `claimPost`, and when it says publish, `publishToPlatform` in the same activity: a scheduled post that comes
     * due costs one local activity and one workflow activation fewer (a burst of them at :00 is bound by that cost).
     * A claim that fails (the database) is reported `claim: null` and the workflow claims again with the retried
     * `claimPost`; a failure of the attempt itself surfaces as `publishToPlatform`'s would.
     * A due scheduled row is claimed and its attempt marked in one conditional statement (`claimDueScheduled`), with
     * no read first (the account's credentials come back in it); only a row it did not take (not due, already
     * `publishing`, gone) is read by `claimPost`.
     */
    async claimAndPublish(input: ClaimInput): Promise<{ claim: ClaimResult | null; attempt?: PublishAttempt }> {
      let claim: ClaimResult;
      let begun: attemptMarks.MarkedPost | undefined;
      try {
        begun = (input.notBefore ?? 0) <= input.now ? await attemptMarks.claimDueScheduled(db, input.postId, new Date(input.now)) : undefined;
        claim = begun ? { kind: 'publish', scheduled: true, hasFirstComment: hasPendingFirstComment(begun), retry: attemptOutcomes.retryStateOf(begun) } : await activities.claimPost(input);
      } catch (err) {
        rt.logger.warn({ err, postId: input.postId }, 'claiming a due post failed; the workflow claims it again with retries');
        return { claim: null };
      }
      if (claim.kind !== 'publish') return { claim };
      // The claim's statement returned the account's columns too: their credentials need no read of their own.
      return { claim, attempt: await sendAndRecord(input.postId, input.now, begun && { row: begun, ctx: publishingContextOfClaimed(rt, begun) }) };
    },

    /**
     * Where a held post stands, read only (a hold owns the claim): `wait` for its time, `gone`, or null while it is
     * `publishing` (see `publishWhenDue`).
     */
    async heldPostState(input: { postId: string }): Promise<ClaimResult | null> {
      return claimSeenBy(await findPost(db, input.postId));
    },

    /**
     * A scheduled post prepared a lead time ahead (README "Scheduled bursts"): held in the worker until its instant,
     * then claimed (only if still `scheduled` at exactly `dueAt` and `scheduleVersion`, the row's version its
     * workflow read, so a hold made stale by a reschedule, even one away and back to `dueAt`, or a cancellation
     * never takes it), attempted and recorded as `claimAndPublish` does, with its result's shape.
     * A regular activity, so the hold keeps no workflow task open; the workflow's loop continues from its result.
     * A claim it did not get reads the row and reports it, never claims it (another hold, or the workflow, owns it):
     * `gone`, `wait` for the row's new time, or no claim when the row is `publishing` (the workflow's retried claim
     * then attempts it, looking first, see `sendOnce`).
     */
    async publishWhenDue(input: { postId: string; dueAt: number; holdMs: number; scheduleVersion?: number }): Promise<{ claim: ClaimResult | null; attempt?: PublishAttempt }> {
      return holdUntilInstant(rt, input, () => claimHeldAndSend(input));
    },

    /**
     * The first attempt of every post of an immediate fan-out, in one activity (one dispatch instead of 25), their
     * platform calls concurrent and the posts the platforms took recorded as they answer, the answers that come
     * together in one statement (`recordingAsAnswered`): a few statements rather than 25, and the slowest platform's
     * answer waits only for its own posts' recording. A post whose attempt failed outside the platform (a database
     * error) is reported `error`, and the workflow attempts it again on its own; its mark in the row keeps that second
     * attempt from sending blindly. One whose recording failed is reported `recorded: false` (the workflow records it).
     */
    async publishGroupToPlatforms(input: { postIds: string[]; now: number }): Promise<Record<string, PublishAttempt | { ok: false; kind: 'error' }>> {
      // Marked, with their accounts' credentials, in one statement (not 25 marks and a read). A failed mark: each post
      // marks its own. Credentials that cannot be opened: that post reports `error`, as a post failing there alone does.
      const marked = await attemptMarks.beginPublishAttempts(db, input.postIds).catch(() => null);
      const rows = new Map((marked ?? []).map((row) => [row.id, row]));
      const recording = recordingAsAnswered(input.postIds.length);
      const attempts = await Promise.allSettled(
        input.postIds.map(async (postId): Promise<PublishAttempt> => {
          let sent: Awaited<ReturnType<typeof sendOnce>>;
          try {
            const row = rows.get(postId);
            sent = marked ? await sendOnce(postId, input.now, { row, ctx: row ? publishingContextOfClaimed(rt, row) : null }) : await sendOnce(postId, input.now);
          } catch (err) {
            void recording.answered();
            throw err;
          }
          if (!('outcome' in sent)) {
            void recording.answered();
            return sent;
          }
          return { ...sent.attempt, recorded: await recording.answered({ postId, ...sent.outcome }) };
        }),
      );
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
    async recordPublished(input: { postId: string; platformPostId: string; publishedAt: number } & PostLink): Promise<void> {
      await attemptOutcomes.recordPublished(db, input.postId, input);
    },

    /**
     * A failed attempt: `retry_count` goes up. Final: `failed` with the sentence, every reservation refunded.
     * Otherwise the post waits for its retry as `requeue` (`scheduled` for a scheduled post, as the spec shows it)
     * until `retryAt`, which the row keeps (`next_attempt_at`).
     */
    async recordFailedAttempt(input: { postId: string; message: string; final: boolean; requeue: 'scheduled' | 'publishing'; retryAt?: number }): Promise<void> {
      await attemptOutcomes.recordFailedAttempt(db, input.postId, input);
    },

    /**
     * A scheduled post whose account credential is being renewed waits for it as `scheduled`, its `retry_count`
     * untouched (decisions.md "Keeping credentials alive": it waits rather than failing for a token Herald can renew),
     * until `retryAt` (`next_attempt_at`), when it looks again; for an hour past its time at most (`now`, the
     * workflow's clock). After that, `waiting: false` and the sentence its failed attempts carry.
     */
    async awaitCredential(input: { postId: string; retryAt?: number; now?: number }): Promise<CredentialWait> {
      if (await attemptOutcomes.requeueAwaitingCredential(db, input.postId, input)) return { waiting: true };
      const row = await findPost(db, input.postId);
      return { waiting: false, message: renewalOverdueMessage(row?.platform ?? '') };
    },

    /**
     * The platform no longer accepts the account's credential: the account becomes `connection_lost` and its
     * scheduled posts are cancelled with that reason (this one too when it was scheduled and claimed). An immediate
     * post fails with the platform's sentence. The cancelled posts' workflows end at their next read of the row.
     */
    async handleConnectionLost(input: { postId: string; scheduled: boolean; message: string }): Promise<void> {
      const row = await findPost(db, input.postId);
      if (!row) return;
      // A refusal leaves the mark open only when a call of it may have sent (`sendMarked`: Mastodon's create met a
      // server error, then its repeat the refusal): failed saying it may be live, never cancelled as never sent.
      if (row.publish_attempt_started_at !== null) await attemptOutcomes.recordFailedAttempt(db, input.postId, { message: mayBeLiveAccountEnded('connection_lost'), final: true, requeue: 'publishing' });
      else if (input.scheduled) await attemptOutcomes.cancelClaimed(db, input.postId, 'connection_lost');
      else await attemptOutcomes.recordFailedAttempt(db, input.postId, { message: input.message, final: true, requeue: 'publishing' });
      if (row.account_id === null) return;
      await markConnectionLost(db, row.account_id);
      await cancelScheduledPosts(rt, { accountId: row.account_id, reason: 'connection_lost' });
    },

    /** The first comment under the published post; a failure never touches the post. Quota: spent or refunded. */
    async publishFirstComment(input: { postId: string }): Promise<'posted' | 'failed' | 'skipped'> {
      const { status } = await sendFirstComment(rt, input.postId, sendStopOfActivity(rt.sendLimits));
      // Not sent because the post is gone (deleted once published, by a path that left its comment `pending`): the
      // comment will never go out, so it is failed and its charges refunded rather than kept reserved for ever.
      if (status === 'skipped') await failPendingFirstComment(db, input.postId, firstCommentNotSent.noLongerPublished, { postGone: true });
      return status;
    },

    /** Downloaded copies of `media_urls` go once no post still waiting to publish uses them; uploads are kept. */
    async cleanupPostMedia(input: { postId: string }): Promise<number> {
      const row = await findPost(db, input.postId);
      if (!row) return 0;
      return removeUnusedCopies(rt, mediaIdsOf(row), row.id);
    },
  };
  return activities;
}

export type PostActivities = ReturnType<typeof createPostActivities>;
