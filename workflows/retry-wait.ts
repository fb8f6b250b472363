/**
 * The one retry policy of posts and threads: how long to wait before the next attempt after a refusal, or null to
 * give up now. Never retried: an unknown outcome (it may be live), an account that can no longer send, a post that is
 * gone or no longer publishing. A scheduled attempt retries any other refusal after its delay or the platform's named
 * wait, whichever is longer (the platform may accept it later); an immediate one, whose request is waiting, only
 * transient faults and rate limits whose named wait is no longer than its delay.
 */
interface RefusalForRetry {
  kind: string;
  retryAfterSeconds?: number | null;
}

/** How often a scheduled post or thread waiting for its account's credential to be renewed looks again (not a spent retry). */
export const CREDENTIAL_WAIT_MS = 2 * 60_000;

const neverRetried: ReadonlySet<string> = new Set(['unknown_outcome', 'account_inactive', 'reauthorize', 'gone', 'not_publishing']);

/** `failures`: the attempts that failed before this one (so `delays[failures]` is this retry's delay). */
export function retryWait(refusal: RefusalForRetry, delays: readonly number[], failures: number, scheduled: boolean): number | null {
  if (failures >= delays.length || neverRetried.has(refusal.kind)) return null;
  const delay = delays[failures]!;
  const named = (refusal.retryAfterSeconds ?? 0) * 1000;
  if (scheduled) return Math.max(delay, named);
  if (refusal.kind === 'retryable') return delay;
  if (refusal.kind === 'rate_limited' && named <= delay) return delay;
  return null;
}
