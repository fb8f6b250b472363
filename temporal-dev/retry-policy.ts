// Temporal's retry-policy rules, shared by activities and workflows: defaults, non-retryable failures,
// maximum attempts, exponential backoff (or the failure's own next-retry delay), and an overall deadline.
import { duration, durationMs, RetryState, type Msg } from './proto';

export function normaliseRetryPolicy(p: Msg | undefined): Msg {
  const initial = durationMs(p?.initialInterval) || 1000;
  return {
    initialInterval: duration(initial),
    backoffCoefficient: p?.backoffCoefficient || 2,
    maximumInterval: duration(durationMs(p?.maximumInterval) || 100 * initial),
    maximumAttempts: p?.maximumAttempts ?? 0,
    nonRetryableErrorTypes: p?.nonRetryableErrorTypes ?? [],
  };
}

/** After failed attempt `attempt`: retry after `backoffMs`, or stop with a retry state. `deadline` 0 = none. */
export function retryDecision(
  policy: Msg,
  attempt: number,
  failure: Msg,
  now: number,
  deadline: number,
): { backoffMs: number } | { retryState: number } {
  const p = normaliseRetryPolicy(policy);
  const info = failure.applicationFailureInfo;
  if (info?.nonRetryable || (info?.type && p.nonRetryableErrorTypes.includes(info.type))) {
    return { retryState: RetryState.NON_RETRYABLE_FAILURE! };
  }
  if (p.maximumAttempts > 0 && attempt >= p.maximumAttempts) return { retryState: RetryState.MAXIMUM_ATTEMPTS_REACHED! };
  const backoffMs =
    durationMs(info?.nextRetryDelay) ||
    Math.min(durationMs(p.initialInterval) * Math.pow(p.backoffCoefficient, attempt - 1), durationMs(p.maximumInterval));
  if (deadline && now + backoffMs >= deadline) return { retryState: RetryState.TIMEOUT! };
  return { backoffMs };
}
