import type { PostRow } from '../src/db/tables/posts';
import { accountOfPost, publishingContextOfClaimed } from '../src/posts/accounts-port';
import { hasPendingFirstComment } from '../src/posts/first-comment';
import { refusalOf, type PublishFailureKind, type Refusal } from '../src/posts/publish-outcome';
import { mediaIdsOf, publishRequestFor } from '../src/posts/publish-request';
import * as posts from '../src/posts/repository';
import type { PostsRuntime } from '../src/posts/runtime';
import * as threads from '../src/threads/repository';
import { platformName } from '../src/platforms/availability';
import { capabilities, deleteSupported } from '../src/platforms/capabilities';
import type { PlatformSlug } from '../src/platforms/types';
import { sendMarked } from './platform-attempt';

/**
 * What the thread activities share (`activities/threads.ts`, `activities/threads-held.ts`): the claim's shape, one
 * part's send, the parts sent in order and the record, and what an activity that sends by itself reports.
 */

interface ThreadPartRef {
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
      /** Whether a part carries media (downloaded copies to clean up after); absent in claims made before it existed. */
      hasMedia?: boolean;
    };

export type PartAttempt =
  | { ok: true; platformPostId: string; url: string | null }
  | { ok: false; kind: PublishFailureKind | 'not_publishing'; message: string; retryAfterSeconds: number | null };

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

function withoutCredentialWait({ awaitingCredential: _, ...refusal }: Refusal & { awaitingCredential?: boolean }): Refusal {
  return refusal;
}

export function createThreadParts(rt: PostsRuntime) {
  const { db } = rt;

  async function rollbackSupportedFor(row: PostRow): Promise<boolean> {
    const placement = typeof row.configuration?.placement === 'string' ? row.configuration.placement : undefined;
    const account = row.account_id ? await accountOfPost(db, row.account_id) : undefined;
    return deleteSupported(row.platform, { via: account?.via ?? undefined, placement });
  }

  /**
   * One part of a `publishing` thread on the platform: a reply to the previous part where the platform has a reply
   * chain, a standalone post elsewhere. The attempt is marked first, in the statement that reads the row and its
   * account's credentials (`beginPublishAttempt`), so a send repeated after a lost workflow task asks the platform
   * or reports the outcome unknown, never sends twice (`sendMarked`). Its platform id is stored at once (the row
   * stays `publishing`), so what is live is never only in a workflow's memory, and a part found stored is answered
   * from the row. A refusal is the value; anything else throws (outcome unknown).
   */
  async function sendPart(postId: string, replyTo: ReplyTo): Promise<PartAttempt> {
    const row = await posts.beginPublishAttempt(db, postId);
    if (!row) return { ok: false, kind: 'not_publishing', message: 'The thread was cancelled while it published', retryAfterSeconds: null };
    if (row.platform_post_id !== null) {
      await posts.clearPublishAttempt(db, row.id); // no call is out: the mark just made is closed again
      return { ok: true, platformPostId: row.platform_post_id, url: row.platform_post_url };
    }
    const ctx = publishingContextOfClaimed(rt, row);
    if (!ctx) return refusalOf(row.platform, 'account_inactive');
    const request = await publishRequestFor(rt, row);
    if (replyTo && capabilities[row.platform].nativeThreads) request.replyTo = replyTo;
    const sent = await sendMarked(rt, row, ctx, request);
    // A thread does not wait for a credential being renewed: it is refused as any part is.
    if ('refusal' in sent) return withoutCredentialWait(sent.refusal);
    await threads.recordPartPublished(db, row.id, sent.published);
    return { ok: true, platformPostId: sent.published.platformPostId, url: sent.published.url };
  }

  return {
    /** A thread taken for publishing (its rows, in order): what the workflow needs to send and, if need be, roll back. */
    async publishClaimOf(rows: PostRow[]): Promise<Extract<ThreadClaim, { kind: 'publish' }>> {
      const first = rows[0]!;
      const last = rows[rows.length - 1]!;
      return {
        kind: 'publish',
        scheduled: first.scheduled_at !== null,
        platform: first.platform,
        platformName: platformName(first.platform),
        parts: rows.map((r) => ({ postId: r.id, threadOrder: r.thread_order! })),
        firstCommentPostId: hasPendingFirstComment(last) ? last.id : null,
        rollbackSupported: await rollbackSupportedFor(first),
        hasMedia: rows.some((r) => mediaIdsOf(r).length > 0),
      };
    },

    sendPart,

    /**
     * The parts of a claimed thread in order, each replying to the previous, until one is refused or not answered,
     * or the time is up (`SENDS_IN_ONE_ACTIVITY_FOR_MS`). A part that throws is reported null: its outcome unknown.
     */
    async sendInOrder(threadId: string, parts: readonly ThreadPartRef[]): Promise<Array<PartAttempt | null>> {
      const until = Date.now() + SENDS_IN_ONE_ACTIVITY_FOR_MS;
      const sent: Array<PartAttempt | null> = [];
      let root: string | null = null;
      let replyTo: ReplyTo = null;
      for (const part of parts) {
        if (sent.length > 0 && Date.now() > until) break;
        let attempt: PartAttempt | null;
        try {
          attempt = await sendPart(part.postId, replyTo);
        } catch (err) {
          rt.logger.warn({ err, postId: part.postId, threadId }, 'a thread part could not be confirmed');
          attempt = null;
        }
        sent.push(attempt);
        if (!attempt?.ok) break;
        root ??= attempt.platformPostId;
        replyTo = { platformPostId: attempt.platformPostId, rootPlatformPostId: root };
      }
      return sent;
    },

    /**
     * Every part went out: the thread recorded `published` here, so the workflow has no record left to make. A record
     * that fails is reported not made (the workflow makes it, with retries); the parts are live either way.
     */
    async recordedIfAllSent(threadId: string, parts: readonly ThreadPartRef[], sent: ReadonlyArray<PartAttempt | null>, publishedAt: number): Promise<boolean> {
      const published = sent.flatMap((attempt, i) => (attempt?.ok ? [{ postId: parts[i]!.postId, platformPostId: attempt.platformPostId, url: attempt.url }] : []));
      if (published.length < parts.length) return false;
      try {
        await threads.recordThreadPublished(db, published, publishedAt);
        return true;
      } catch (err) {
        rt.logger.error({ err, threadId }, 'a thread went out but could not be recorded yet; the workflow records it');
        return false;
      }
    },
  };
}
