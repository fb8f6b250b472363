import { storedLinkOf } from '../src/posts/post-link';
import { callInFlightUntil } from '../src/posts/attempt-marks';
import { retryStateOf, waitingUntil } from '../src/posts/attempt-outcomes';
import { InstantClaims } from '../src/posts/instant-claims';
import type { PostsRuntime } from '../src/posts/runtime';
import * as threads from '../src/threads/repository';
import { loadThreadParts, type ThreadPartRow } from '../src/threads/reads';
import { holdUntilInstant } from './held';
import { createThreadParts, sharedStatus, type PartAttempt, type ThreadStep } from './thread-parts';

/**
 * A scheduled thread prepared a lead time ahead, as a scheduled post is (README "Threads"): held in the worker until
 * its shared time, claimed whole at exactly that time, and its parts sent at once, each replying to the previous.
 * What a hold reports is a `ThreadStep` (`activities/thread-parts.ts`).
 */

/** Held threads of one instant claimed per statement (`InstantClaims`). */
const HELD_CLAIMS_PER_STATEMENT = 100;

export function createHeldThreadActivities(rt: PostsRuntime) {
  const { db } = rt;
  const { publishClaimOf, sendAndRecord } = createThreadParts(rt);
  const heldClaims = new InstantClaims<{ id: string; schedule_version: number; parts: ThreadPartRow[] }>(
    async (threadIds, at, versions) => byThread(await threads.claimThreadsScheduledAt(db, threadIds, at, versions)),
    HELD_CLAIMS_PER_STATEMENT,
  );

  /**
   * Where a held thread stands, from its rows (read only: a hold owns the claim). `scheduled`: wait for its time (or,
   * after a failed attempt, its retry's: `next_attempt_at`). `publishing`: claimed (by a hold); the parts whose
   * platform ids are stored went out, and the next one's outcome is unknown unless every part is stored. `published` (by a hold the workflow lost track of): every part sent and
   * recorded, the first comment still the workflow's to send. Anything else: gone.
   */
  async function stepOf(threadId: string, lostAt?: number): Promise<ThreadStep> {
    const rows = await loadThreadParts(db, threadId);
    const status = sharedStatus(rows);
    if (status !== 'scheduled' && status !== 'publishing' && status !== 'published') return { claim: { kind: 'gone' } };
    if (status === 'scheduled') {
      const until = waitingUntil(rows[0]!);
      return { claim: until === null ? null : { kind: 'wait', until, retry: retryStateOf(rows[0]!), scheduleVersion: rows[0]!.schedule_version } };
    }
    const firstUnstored = rows.findIndex((r) => r.platform_post_id === null);
    if (status === 'publishing' && firstUnstored !== -1 && lostAt !== undefined) {
      // The hold was lost (its heartbeats stopped: a worker stalled, or shut down while it sent), so its part's call
      // may still be on its way: the look waits until it can no longer land, as a taken-over claim's does
      // (`claimThread`); the workflow then claims the thread and its parts' calls look first.
      const inFlightUntil = Math.max(...rows.map(callInFlightUntil));
      if (inFlightUntil > lostAt) {
        const retry = retryStateOf(rows[0]!);
        return { claim: { kind: 'wait', until: inFlightUntil, retry: { ...retry, notBefore: Math.max(retry.notBefore, inFlightUntil) } } };
      }
    }
    const live = firstUnstored === -1 ? rows : rows.slice(0, firstUnstored);
    const sent: Array<PartAttempt | null> = live.map((r) => ({ ok: true, platformPostId: r.platform_post_id!, ...storedLinkOf(r) }));
    return { claim: publishClaimOf(rows), sent: firstUnstored === -1 ? sent : [...sent, null], recorded: status === 'published' };
  }

  /** `publishThreadWhenDue` at its instant: the claim exact in time and version, then the sends. */
  async function claimHeldAndSend(input: { threadId: string; dueAt: number; scheduleVersion?: number }): Promise<ThreadStep> {
    let rows: ThreadPartRow[] | undefined;
    try {
      // A hold without a version was started by workflow code from before the rows kept one: version 0 then.
      rows = (await heldClaims.claim(input.threadId, input.dueAt, input.scheduleVersion ?? 0))?.parts;
    } catch (err) {
      rt.logger.warn({ err, threadId: input.threadId }, 'claiming a held thread failed; the workflow claims it again with retries');
      return { claim: null };
    }
    if (!rows) {
      const seen = await stepOf(input.threadId);
      // Still due at `dueAt` yet not taken (or at another version: a stale hold, whose workflow no longer listens):
      // no claim, so the workflow's claim by time takes it rather than holding again for the same instant.
      return seen.claim?.kind === 'wait' && seen.claim.until === input.dueAt ? { claim: null } : seen;
    }
    const claim = publishClaimOf(rows);
    // `published_at` from the instant: `dueAt` in time-skipped tests, the worker's clock otherwise.
    return { claim, ...(await sendAndRecord(input.threadId, claim.parts, () => Math.max(input.dueAt, Date.now()))) };
  }

  return {
    /**
     * A scheduled thread prepared a lead time ahead: held in the worker until `dueAt` (`holdUntilInstant`), then
     * claimed whole only if still `scheduled` at exactly `dueAt` and `scheduleVersion`, the parts' version its
     * workflow read (a hold made stale by a reschedule, even one away and back to `dueAt`, or a cancellation never
     * takes it), and its parts sent from the instant. A claim it did not get reads the rows and reports them, never
     * claims them.
     */
    async publishThreadWhenDue(input: { threadId: string; dueAt: number; holdMs: number; scheduleVersion?: number }): Promise<ThreadStep> {
      return holdUntilInstant(rt, input, () => claimHeldAndSend(input));
    },

    /**
     * Where a held thread stands, read only (see `stepOf`): on a change signalled during the hold, or after a hold was
     * lost. `lostAt`: the hold was lost, at this time by the workflow's clock (its calls may still be out); absent
     * for a signal's look, and from workflow code before 2026-12-07 evening (which called the part again at once).
     */
    async heldThreadState(input: { threadId: string; lostAt?: number }): Promise<ThreadStep> {
      return stepOf(input.threadId, input.lostAt);
    },
  };
}

export type HeldThreadActivities = ReturnType<typeof createHeldThreadActivities>;

/**
 * The rows a claim took, one entry per thread, its parts in order, with their shared version (`InstantClaims` gives
 * the thread to the hold of that version, not to a stale one of the same instant).
 */
function byThread(rows: ThreadPartRow[]): Array<{ id: string; schedule_version: number; parts: ThreadPartRow[] }> {
  const threadsById = new Map<string, ThreadPartRow[]>();
  for (const row of rows) threadsById.set(row.thread_id!, [...(threadsById.get(row.thread_id!) ?? []), row]);
  return [...threadsById].map(([id, parts]) => ({ id, schedule_version: parts[0]!.schedule_version, parts: parts.sort((a, b) => a.thread_order! - b.thread_order!) }));
}
