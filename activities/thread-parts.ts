import type { PostRow } from '../src/db/tables/posts';
import { cancellationOfClaimed, publishingContextOfClaimed } from '../src/posts/accounts-port';
import { removeCopiesOfCancelled } from '../src/posts/media-cleanup';
import { hasPendingFirstComment } from '../src/posts/first-comment';
import { refusalOf, type PublishFailureKind } from '../src/posts/publish-outcome';
import { mediaIdsOf } from '../src/posts/publish-request';
import * as attemptMarks from '../src/posts/attempt-marks';
import * as attemptOutcomes from '../src/posts/attempt-outcomes';
import { linkOf, storedLinkOf } from '../src/posts/post-link';
import type { PostsRuntime } from '../src/posts/runtime';
import * as threads from '../src/threads/repository';
import { rollbackSupportedOf, type ThreadPartRow } from '../src/threads/reads';
import { platformName } from '../src/platforms/availability';
import { capabilities } from '../src/platforms/capabilities';
import type { PlatformSlug, PostLink } from '../src/platforms/types';
import { mayBeLiveWithAccountOff } from './post-send';
import { requestOrRefusal, sendMarked } from './platform-attempt';

/**
 * What the thread activities share (`activities/threads.ts`, `activities/threads-held.ts`): the claim's shape, one
 * part's send, the parts sent in order and the record, and what an activity that sends by itself reports.
 */

interface ThreadPartRef {
  postId: string;
  threadOrder: number;
}

/**
 * `retry`: the rows' retry state, as a post's claim carries it (`ClaimResult`); absent from claims made before it.
 * `scheduleVersion`: the parts' `schedule_version` (they share it), which a hold for `until` is given and its claim
 * requires, as a post's; absent from claims made before (version 0).
 */
export type ThreadClaim =
  | { kind: 'gone' }
  | { kind: 'wait'; until: number; retry?: attemptOutcomes.RetryState; scheduleVersion?: number }
  | {
      kind: 'publish';
      scheduled: boolean;
      retry?: attemptOutcomes.RetryState;
      platform: PlatformSlug;
      /** The platform's name for messages (`X`, `Bluesky`...). */
      platformName: string;
      parts: ThreadPartRef[];
      /** The last part, when the thread carries a first comment (published under it). */
      firstCommentPostId: string | null;
      /** Whether this account can delete what it published (`deleteSupported`): without it no rollback is tried. */
      rollbackSupported: boolean;
      /** Whether a part carries media (downloaded copies to clean up after); absent in claims made before it existed. */
      hasMedia?: boolean;
    };

/** `awaitingCredential`: the account's credential ended and is being renewed (a scheduled thread waits for it). */
export type PartAttempt =
  | ({ ok: true; platformPostId: string } & PostLink)
  | { ok: false; kind: PublishFailureKind | 'not_publishing'; message: string; retryAfterSeconds: number | null; awaitingCredential?: boolean };

/** A reply chain's place: the previous part and the first (root). */
export type ReplyTo = { platformPostId: string; rootPlatformPostId: string } | null;

/**
 * What an activity that claims a thread and sends its parts itself reports (`publishThreadWhenDue` at the instant,
 * `publishThreadNow` for an immediate thread), and what the rows say of a thread (`heldThreadState`): `claim` as
 * `claimThread` gives it, or null (claim it again, with retries); `sent`, the parts already attempted, in order: each
 * a `PartAttempt`, or null where the outcome is unknown (an activity lost while it sent). The workflow goes on from
 * there: the refused part's quick retries, the parts not yet sent, the rollback, the record. `recorded`: every part
 * went out and the thread is recorded `published` already.
 */
export type ThreadStep = { claim: ThreadClaim | null; sent?: Array<PartAttempt | null>; recorded?: boolean };

/**
 * How long after its first part an activity goes on sending parts; the rest go part by part from the workflow. The
 * activity's time limit (a hold's plus 10 minutes, an immediate thread's 10 minutes) must cover the last part it starts.
 */
const SENDS_IN_ONE_ACTIVITY_FOR_MS = 60_000;

/** The status every part of a thread has, or null when it has no parts or they differ (a thread changes as a whole). */
export function sharedStatus(rows: readonly PostRow[]): PostRow['status'] | null {
  const status = rows[0]?.status;
  return status !== undefined && rows.every((r) => r.status === status) ? status : null;
}

/** A part sent by this activity: the row its mark returned, and the row's version as this activity last wrote it. */
interface SentPart extends attemptMarks.PartPublished {
  marked: attemptMarks.MarkedPost;
  /**
   * Its mark's `row_version`, then its store's with the next part's mark (`beginPartAttemptAfter`); null when it was
   * stored alone, after someone else wrote the row, so a record from `marked` would not show the row as it is.
   */
  version: string | null;
}

/** Where a part's attempt ended: the attempt, and the part as sent now (not answered from its row), to be stored. */
type PartStep = { attempt: PartAttempt; sentNow?: SentPart };

export function createThreadParts(rt: PostsRuntime) {
  const { db } = rt;

  /**
   * Marks a part's attempt (`beginPublishAttempt`: the row with its account's credentials), storing `previous`, the
   * part this activity sent before it, in the same statement (`beginPartAttemptAfter`), or on its own when that one
   * could not (its row written since its mark, or this part no longer `publishing`).
   */
  async function markPart(postId: string, previous: SentPart | null): Promise<attemptMarks.MarkedPost | undefined> {
    if (!previous) return attemptMarks.beginPublishAttempt(db, postId);
    const row = await attemptMarks.beginPartAttemptAfter(db, postId, { ...previous, markedVersion: previous.marked.row_version });
    previous.version = row?.stored_version ?? null;
    if (previous.version === null) await attemptMarks.recordPartPublished(db, previous);
    return row;
  }

  /**
   * A scheduled thread whose first part finds its account switched off (nothing of it live) is cancelled whole with
   * the account's reason, as its account's own cancellation would have (`cancelClaimedThread`; the posts' twin is
   * `cancelledWithAccount` in `activities/posts.ts`), its media copies removed, and reported `not_publishing` (the
   * workflow ends). A later part, or an immediate thread, fails as before; so does a part an earlier call of which
   * never reported back (`mayBeLiveWithAccountOff`: it may be live, so the thread is failed saying so, never cancelled).
   */
  async function cancelledWithAccount(row: attemptMarks.MarkedPost): Promise<PartAttempt | undefined> {
    const reason = cancellationOfClaimed(row);
    // The first part (`thread_order` 1): parts go out in order, so nothing of the thread is live yet.
    if (reason === null || row.thread_id === null || row.thread_order !== 1) return undefined;
    await removeCopiesOfCancelled(rt, await threads.cancelClaimedThread(db, row.thread_id, reason));
    return { ok: false, kind: 'not_publishing', message: 'The thread was cancelled: its account is switched off', retryAfterSeconds: null };
  }

  /**
   * One part of a `publishing` thread on the platform: a reply to the previous part where the platform has a reply
   * chain, a standalone post elsewhere. The attempt is marked first (`markPart`), so a send repeated after a lost
   * workflow task asks the platform or reports the outcome unknown, never sends twice (`sendMarked`). A part found
   * stored is answered from the row. A refusal is the value; anything else throws (outcome unknown). A part sent is
   * not stored here: the caller stores it (`sendPart`, or the next part's mark).
   */
  async function attemptPart(postId: string, replyTo: ReplyTo, previous: SentPart | null): Promise<PartStep> {
    const row = await markPart(postId, previous);
    if (!row) return { attempt: { ok: false, kind: 'not_publishing', message: 'The thread was cancelled while it published', retryAfterSeconds: null } };
    if (row.platform_post_id !== null) {
      await attemptOutcomes.clearPublishAttempt(db, row.id); // no call is out: the mark just made is closed again
      return { attempt: { ok: true, platformPostId: row.platform_post_id, ...storedLinkOf(row) } };
    }
    const ctx = publishingContextOfClaimed(rt, row);
    // An earlier call of this part never reported back: it may be live, so the thread is never cancelled as unsent.
    if (!ctx) return { attempt: row.earlier_attempt_open ? mayBeLiveWithAccountOff(row) : ((await cancelledWithAccount(row)) ?? refusalOf(row.platform, 'account_inactive')) };
    const prepared = await requestOrRefusal(rt, row);
    if ('refusal' in prepared) return { attempt: prepared.refusal };
    const { request } = prepared;
    if (replyTo && capabilities[row.platform].nativeThreads) request.replyTo = replyTo;
    const sent = await sendMarked(rt, row, ctx, request);
    if ('refusal' in sent) return { attempt: sent.refusal };
    const { platformPostId } = sent.published;
    const link = linkOf(sent.published);
    return { attempt: { ok: true, platformPostId, ...link }, sentNow: { postId, platformPostId, ...link, marked: row, version: row.row_version } };
  }

  /**
   * The parts of a claimed thread in order, each replying to the previous, until one is refused or not answered,
   * or the time is up (`SENDS_IN_ONE_ACTIVITY_FOR_MS`). A part that throws is reported null: its outcome unknown.
   * Each part's platform id is stored by the statement that marks the next part; the last part's by the thread's
   * record when every part went out (`sendAndRecord`), by a store of its own otherwise (`storeLast`).
   */
  async function sendInOrder(threadId: string, parts: readonly ThreadPartRef[]): Promise<{ sent: Array<PartAttempt | null>; unstored: SentPart | null; sentNow: SentPart[] }> {
    const until = Date.now() + SENDS_IN_ONE_ACTIVITY_FOR_MS;
    const sent: Array<PartAttempt | null> = [];
    const sentNow: SentPart[] = [];
    let unstored: SentPart | null = null;
    let root: string | null = null;
    let replyTo: ReplyTo = null;
    for (const part of parts) {
      if (sent.length > 0 && Date.now() > until) break;
      let attempt: PartAttempt | null;
      try {
        const step = await attemptPart(part.postId, replyTo, unstored);
        unstored = step.sentNow ?? null;
        if (step.sentNow) sentNow.push(step.sentNow);
        attempt = step.attempt;
      } catch (err) {
        rt.logger.warn({ err, postId: part.postId, threadId }, 'a thread part could not be confirmed');
        attempt = null;
      }
      sent.push(attempt);
      if (!attempt?.ok) break;
      root ??= attempt.platformPostId;
      replyTo = { platformPostId: attempt.platformPostId, rootPlatformPostId: root };
    }
    return { sent, unstored, sentNow };
  }

  /**
   * The part sent last and not yet stored, stored on its own (the thread stopped before its end, or its record
   * failed). A store that fails reports the part unknown, as a part whose send could not be confirmed is: its platform
   * id is then only in this activity's memory.
   */
  async function storeLast(threadId: string, parts: readonly ThreadPartRef[], unstored: SentPart | null, sent: Array<PartAttempt | null>): Promise<void> {
    if (!unstored) return;
    try {
      await attemptMarks.recordPartPublished(db, unstored);
    } catch (err) {
      rt.logger.warn({ err, postId: unstored.postId, threadId }, 'a thread part went out but could not be stored');
      sent[parts.findIndex((part) => part.postId === unstored.postId)] = null;
    }
  }

  return {
    /** A thread taken for publishing (its rows, in order): what the workflow needs to send and, if need be, roll back. */
    publishClaimOf(rows: ThreadPartRow[]): Extract<ThreadClaim, { kind: 'publish' }> {
      const first = rows[0]!;
      const last = rows[rows.length - 1]!;
      return {
        kind: 'publish',
        scheduled: first.scheduled_at !== null,
        platform: first.platform,
        platformName: platformName(first.platform),
        parts: rows.map((r) => ({ postId: r.id, threadOrder: r.thread_order! })),
        firstCommentPostId: hasPendingFirstComment(last) ? last.id : null,
        rollbackSupported: rollbackSupportedOf(first),
        hasMedia: rows.some((r) => mediaIdsOf(r).length > 0),
        retry: attemptOutcomes.retryStateOf(first),
      };
    },

    /** One part, stored as soon as it went out (the workflow's part-by-part path). */
    async sendPart(postId: string, replyTo: ReplyTo): Promise<PartAttempt> {
      const step = await attemptPart(postId, replyTo, null);
      if (step.sentNow) await attemptMarks.recordPartPublished(db, step.sentNow);
      return step.attempt;
    },

    /**
     * The parts sent in order (`sendInOrder`) and, when every part went out, the thread recorded `published` here, so
     * the workflow has no record left to make: in one statement when every part was sent by this activity and nothing
     * else wrote its row since (each given with its mark and version), else in the repository's transaction. A
     * record that fails is reported not made (the workflow makes it, with retries); the parts are live either way.
     */
    async sendAndRecord(threadId: string, parts: readonly ThreadPartRef[], publishedAt: () => number): Promise<Omit<ThreadStep, 'claim'>> {
      const { sent, unstored, sentNow } = await sendInOrder(threadId, parts);
      const published = sent.flatMap((attempt, i) => (attempt?.ok ? [{ postId: parts[i]!.postId, platformPostId: attempt.platformPostId, ...linkOf(attempt) }] : []));
      if (published.length < parts.length) {
        await storeLast(threadId, parts, unstored, sent);
        return { sent, recorded: false };
      }
      const at = publishedAt();
      const outcomes = published.map((part) => {
        const sentHere = sentNow.find((s) => s.postId === part.postId);
        return { ...part, publishedAt: at, marked: sentHere?.version ? { ...sentHere.marked, row_version: sentHere.version } : undefined };
      });
      try {
        await threads.recordThreadPublished(db, outcomes);
        return { sent, recorded: true };
      } catch (err) {
        rt.logger.error({ err, threadId }, 'a thread went out but could not be recorded yet; the workflow records it');
        await storeLast(threadId, parts, unstored, sent);
        return { sent, recorded: false };
      }
    },
  };
}
