import { Context } from '@temporalio/activity';
import type { PostsRuntime } from '../src/posts/runtime';

/** How often a held activity heartbeats (the SDK throttles what it sends; see `holdUntilInstant`). */
const HELD_HEARTBEAT_EVERY_MS = 10_000;
/** The longest a held post or thread, once sent, waits for the rest of its instant before reporting. */
const INSTANT_REPORT_WAIT_MS = 10_000;

/**
 * The hold of a scheduled post (`publishWhenDue`) or thread (`publishThreadWhenDue`) prepared a lead time ahead
 * (README "Scheduled bursts"): waits in the worker until `dueAt`, runs `atInstant` (the exact-time claim and the
 * sends), then reports once the instant's other holds in this process have sent theirs (`rt.heldInstants`).
 *
 * The hold is `min(holdMs, dueAt - Date.now())`: in production the worker's clock is the truth, so nothing leaves
 * before its time as this process reads it, whenever the hold started; in the time-skipping test environment the
 * workflow's clock runs ahead of `Date.now()`, and `holdMs` (the workflow's own distance to `dueAt`) keeps it short.
 * Heartbeats (the SDK sends at most one per 0.8 × the heartbeat timeout the workflow gives) let Temporal see a worker
 * that died during the hold within that timeout, rather than at the hold's end plus the platform time. A worker
 * shutting down cancels its activities: the hold then fails before any claim.
 */
export async function holdUntilInstant<T>(rt: Pick<PostsRuntime, 'heldInstants'>, input: { dueAt: number; holdMs: number }, atInstant: () => Promise<T>): Promise<T> {
  const holdMs = Math.max(0, Math.min(input.holdMs, input.dueAt - Date.now()));
  const context = Context.current();
  const beating = setInterval(() => context.heartbeat(), HELD_HEARTBEAT_EVERY_MS);
  const held = rt.heldInstants.enter(input.dueAt);
  try {
    await held.untilDue(holdMs, context.cancellationSignal);
    const step = await atInstant();
    held.leave();
    // The rows are recorded already: only the workflow's next step waits for the instant's other sends.
    await held.othersLeft(INSTANT_REPORT_WAIT_MS);
    return step;
  } finally {
    held.leave();
    clearInterval(beating);
  }
}
