import { setTimeout as sleep } from 'node:timers/promises';
import { StillInProgress } from '../idempotency/key-claim';
import { isSettled } from './change-feed';
import type { PostsRuntime } from './runtime';
import { settlementsOf } from './view-queries';

/**
 * The wait of a takeover's answer (`answerMadePosts`, `answerMadeThreads`, `answerMadeFirstComment`): a retry that took
 * over the Idempotency-Key of a request whose process died answers from what that request made once it settled. Apart
 * from `await-settled.ts` (a request's own wait, which starts workflows): the first comment's retry, which activities
 * import, waits too.
 */

/**
 * How long the answer of a takeover waits for the rows an earlier claim of its Idempotency-Key made (`untilMadeSettled`):
 * the workflow of a process that died is carried on by another worker, or started by the reconciler within a minute.
 */
export const madeSettleMs = 60_000;

/** How often that wait reads the rows: a takeover after a crash is rare, and a plain poll costs nothing between. */
export const madeSettlePollMs = 500;

/** The clock `untilMadeSettled` waits by: the real one, or a test's, which runs the wait to its end at once. */
interface SettleClock {
  now(): number;
  sleep(ms: number): Promise<unknown>;
}

const realClock: SettleClock = { now: () => Date.now(), sleep: (ms) => sleep(ms) };

/**
 * Returns once every one of `postIds` settled as an immediate request's wait would have it (`isSettled`; a removed
 * row counts: an immediate thread that failed), polling the rows: the answer of a takeover after a crash, rare, whose
 * workflow this process did not start. Past `madeSettleMs`, 409 `idempotency_in_progress` (`StillInProgress`).
 */
export async function untilMadeSettled(rt: Pick<PostsRuntime, 'db'>, postIds: readonly string[], clock: SettleClock = realClock): Promise<void> {
  const until = clock.now() + madeSettleMs;
  for (;;) {
    const rows = await settlementsOf(rt.db, postIds);
    if (rows.every((row) => isSettled({ status: row.status, firstCommentStatus: row.first_comment_status }))) return;
    if (clock.now() >= until) throw new StillInProgress();
    await clock.sleep(madeSettlePollMs);
  }
}
