import type { PostRow } from '../src/db/tables/posts';
import { InstantClaims } from '../src/posts/instant-claims';
import type { PostsRuntime } from '../src/posts/runtime';
import * as threads from '../src/threads/repository';
import { holdUntilInstant } from './held';
import { createThreadParts, sharedStatus, type PartAttempt, type ReplyTo, type ThreadClaim } from './thread-parts';

/**
 * A scheduled thread prepared a lead time ahead, as a scheduled post is (README "Threads"): held in the worker until
 * its shared time, claimed whole at exactly that time, and its parts sent at once, each replying to the previous.
 *
 * What a hold reports (`HeldThreadStep`): `claim` as `claimThread` gives it, or null (claim it again, with retries);
 * `sent`, the parts already attempted, in order: each a `PartAttempt`, or null where the outcome is unknown (a hold
 * lost while it sent). The workflow goes on from there: the refused part's quick retries, the parts not yet sent,
 * the rollback, the record. `recorded`: every part went out and the thread is recorded `published` already.
 */
export type HeldThreadStep = { claim: ThreadClaim | null; sent?: Array<PartAttempt | null>; recorded?: boolean };

/** Held threads of one instant claimed per statement (`InstantClaims`). */
const HELD_CLAIMS_PER_STATEMENT = 100;
/**
 * How long after the instant a hold goes on sending parts; the rest go part by part from the workflow. The hold's
 * time limit (the hold plus 10 minutes) must cover the last part it starts.
 */
const HELD_SENDS_FOR_MS = 60_000;

export function createHeldThreadActivities(rt: PostsRuntime) {
  const { db } = rt;
  const { publishClaimOf, sendPart } = createThreadParts(rt);
  const heldClaims = new InstantClaims<{ id: string; parts: PostRow[] }>(
    async (threadIds, at) => byThread(await threads.claimThreadsScheduledAt(db, threadIds, at)),
    HELD_CLAIMS_PER_STATEMENT,
  );

  /** The parts claimed at the instant, in order, until one is refused or is not answered, or the time is up. */
  async function sendFromInstant(rows: PostRow[]): Promise<Array<PartAttempt | null>> {
    const until = Date.now() + HELD_SENDS_FOR_MS;
    const sent: Array<PartAttempt | null> = [];
    let root: string | null = null;
    let replyTo: ReplyTo = null;
    for (const row of rows) {
      if (sent.length > 0 && Date.now() > until) break;
      let attempt: PartAttempt | null;
      try {
        attempt = await sendPart(row.id, replyTo);
      } catch (err) {
        rt.logger.warn({ err, postId: row.id, threadId: row.thread_id }, 'a held thread part could not be confirmed');
        attempt = null;
      }
      sent.push(attempt);
      if (!attempt?.ok) break;
      root ??= attempt.platformPostId;
      replyTo = { platformPostId: attempt.platformPostId, rootPlatformPostId: root };
    }
    return sent;
  }

  /**
   * Every part went out: the thread recorded `published` here, so the workflow has no record left to make. A record
   * that fails is reported not made (the workflow makes it, with retries); the parts are live either way.
   * `published_at` from the instant: `dueAt` in time-skipped tests, the worker's clock otherwise.
   */
  async function recordedIfAllSent(rows: PostRow[], sent: Array<PartAttempt | null>, dueAt: number): Promise<boolean> {
    const parts = sent.flatMap((attempt, i) => (attempt?.ok ? [{ postId: rows[i]!.id, platformPostId: attempt.platformPostId, url: attempt.url }] : []));
    if (parts.length < rows.length) return false;
    try {
      await threads.recordThreadPublished(db, parts, Math.max(dueAt, Date.now()));
      return true;
    } catch (err) {
      rt.logger.error({ err, threadId: rows[0]!.thread_id }, 'a held thread went out but could not be recorded yet; the workflow records it');
      return false;
    }
  }

  /**
   * Where a held thread stands, from its rows (read only: a hold owns the claim). `scheduled`: wait for its time.
   * `publishing`: claimed (by a hold); the parts whose platform ids are stored went out, and the next one's outcome
   * is unknown unless every part is stored. `published` (by a hold the workflow lost track of): every part sent and
   * recorded, the first comment still the workflow's to send. Anything else: gone.
   */
  async function stepOf(threadId: string): Promise<HeldThreadStep> {
    const rows = await threads.loadThreadParts(db, threadId);
    const status = sharedStatus(rows);
    if (status !== 'scheduled' && status !== 'publishing' && status !== 'published') return { claim: { kind: 'gone' } };
    if (status === 'scheduled') return { claim: rows[0]!.scheduled_at ? { kind: 'wait', until: rows[0]!.scheduled_at.getTime() } : null };
    const firstUnstored = rows.findIndex((r) => r.platform_post_id === null);
    const live = firstUnstored === -1 ? rows : rows.slice(0, firstUnstored);
    const sent: Array<PartAttempt | null> = live.map((r) => ({ ok: true, platformPostId: r.platform_post_id!, url: r.platform_post_url }));
    return { claim: await publishClaimOf(rows), sent: firstUnstored === -1 ? sent : [...sent, null], recorded: status === 'published' };
  }

  /** `publishThreadWhenDue` at its instant: the exact-time claim, then the sends. */
  async function claimHeldAndSend(input: { threadId: string; dueAt: number }): Promise<HeldThreadStep> {
    let rows: PostRow[] | undefined;
    try {
      rows = (await heldClaims.claim(input.threadId, input.dueAt))?.parts;
    } catch (err) {
      rt.logger.warn({ err, threadId: input.threadId }, 'claiming a held thread failed; the workflow claims it again with retries');
      return { claim: null };
    }
    if (!rows) {
      const seen = await stepOf(input.threadId);
      // Still due at `dueAt` yet not taken: no claim, so the workflow's claim by time takes it rather than holding
      // again for the same instant.
      return seen.claim?.kind === 'wait' && seen.claim.until === input.dueAt ? { claim: null } : seen;
    }
    const sent = await sendFromInstant(rows);
    return { claim: await publishClaimOf(rows), sent, recorded: await recordedIfAllSent(rows, sent, input.dueAt) };
  }

  return {
    /**
     * A scheduled thread prepared a lead time ahead: held in the worker until `dueAt` (`holdUntilInstant`), then
     * claimed whole only if still `scheduled` at exactly `dueAt` (a hold made stale by a reschedule or a cancellation
     * never takes it), and its parts sent from the instant. A claim it did not get reads the rows and reports them,
     * never claims them.
     */
    async publishThreadWhenDue(input: { threadId: string; dueAt: number; holdMs: number }): Promise<HeldThreadStep> {
      return holdUntilInstant(rt, input, () => claimHeldAndSend(input));
    },

    /** Where a held thread stands, read only (see `stepOf`): on a change signalled during the hold, or after a hold was lost. */
    async heldThreadState(input: { threadId: string }): Promise<HeldThreadStep> {
      return stepOf(input.threadId);
    },
  };
}

export type HeldThreadActivities = ReturnType<typeof createHeldThreadActivities>;

/** The rows a claim took, one entry per thread, its parts in order. */
function byThread(rows: PostRow[]): Array<{ id: string; parts: PostRow[] }> {
  const threadsById = new Map<string, PostRow[]>();
  for (const row of rows) threadsById.set(row.thread_id!, [...(threadsById.get(row.thread_id!) ?? []), row]);
  return [...threadsById].map(([id, parts]) => ({ id, parts: parts.sort((a, b) => a.thread_order! - b.thread_order!) }));
}
