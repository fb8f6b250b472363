import { Context } from '@temporalio/activity';
import { lastCreateStart, sendStopSignal, type SendLimits } from '../src/platforms/send-stop';

/**
 * Where an activity's platform calls get their stop (`PublishRequest.signal`; the rule and its arithmetic are
 * `src/platforms/send-stop.ts`): from the activity's own start, noted as it begins (`notingStart`, on every activity
 * of the worker), and its start-to-close limit (`Context.info.startToCloseTimeoutMs`, what the workflow gave it: 10
 * minutes for a platform call, a hold's plus 10 minutes for a held one), joined with its cancellation signal (a local
 * activity hears its own timeout and the worker's shutdown there; a regular one only what its heartbeats bring).
 * One signal per activity, shared by every call it makes (a fan-out's 25 posts, a thread's parts).
 */

const startedAt = new WeakMap<Context, number>();
const stops = new WeakMap<Context, AbortSignal>();

function currentContext(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined; // not inside an activity (a test calling the function itself): no limit
  }
}

/** The activities, each noting its start as it begins (a map entry per activity, dropped with its context). */
export function notingStart<T extends object>(activities: T): T {
  const noted: Record<string, unknown> = {};
  for (const [name, member] of Object.entries(activities)) {
    if (typeof member !== 'function') {
      noted[name] = member;
      continue;
    }
    const activity = member as (...args: unknown[]) => unknown;
    noted[name] = (...args: unknown[]) => {
      const ctx = currentContext();
      if (ctx && !startedAt.has(ctx)) startedAt.set(ctx, Date.now());
      return activity(...args);
    };
  }
  return noted as T;
}

/**
 * The running activity's stop for its platform calls, or undefined outside an activity. An activity that was not
 * noted (`notingStart`) counts from this first ask: later than its start, so its limit is read as later than it is.
 */
export function sendStopOfActivity(limits: SendLimits): AbortSignal | undefined {
  const ctx = currentContext();
  if (!ctx) return undefined;
  let stop = stops.get(ctx);
  if (!stop) {
    const limitMs = ctx.info.startToCloseTimeoutMs;
    const start = startedAt.get(ctx) ?? Date.now();
    stop = Number.isFinite(limitMs) && limitMs > 0 ? sendStopSignal(lastCreateStart(start, limitMs, limits), ctx.cancellationSignal) : ctx.cancellationSignal;
    stops.set(ctx, stop);
  }
  return stop;
}
