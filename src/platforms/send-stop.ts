import { DEFAULT_REQUEST_TIMEOUT_MS } from '../net/http';
import { platformName } from './availability';
import { PlatformFailure, type PlatformSlug } from './types';

/**
 * A send that stops at its time limit (README "Posts", 2026-12-07 late night): the one rule every adapter follows
 * before a create (`beforeCreate`) and in its waits (`pauseUnlessStopped`), with `PublishRequest.signal`.
 *
 * A publish activity (a post, a thread part, a first comment; one attempt, start-to-close limit L) that fails at L is
 * followed by the workflow's next call, which looks on the platform first and, finding nothing, sends. The failed
 * call is not stopped by Temporal: a regular activity's worker hears of its timeout only through heartbeats, and a
 * local activity's cancellation reaches only code that reads it. A chain still uploading, polling media processing
 * (X: up to 60 STATUS polls; Graph: 5 minutes of container polling) or waiting for a credential could then reach its
 * create after the look and send a second copy. So no create may BEGIN later than
 *
 *     start + L − T − M
 *
 * with start the activity's own start (the worker's clock when the activity function began; the timeout's clock
 * began no later, at the dispatch), T the HTTP client's per-request timeout (`DEFAULT_REQUEST_TIMEOUT_MS`, 30 s:
 * one create is one request, and no platform client names a longer one for it) and M a margin (30 s) for the
 * dispatch's hop, the worker's clock against the one that times the activity, and the platform finishing a request
 * whose answer Herald stopped waiting for. A create that began by then has its answer or its failure by start + L − M,
 * before the workflow hears of the time limit and its next call looks: that look sees every create the stopped call
 * made. With L = 10 minutes, creates may begin up to 9 minutes in; a held activity's L is its hold plus 10 minutes.
 * An activity given L of T + M (one minute) or less could begin no create at all: every platform call's is longer.
 *
 * A chain stopped before its create sent nothing: `SendStopped` is `retryable` (the attempt's mark is closed, the
 * workflow's retry sends afresh, one retry spent as a transient fault's would be). A stop after a step that may have
 * published (a repeat after a lost answer) is not this failure: the adapter reports that step's own outcome.
 */

/** `requestTimeoutMs`: T above; `marginMs`: M. Tests shorten both (`PostsRuntime.sendLimits`). */
export interface SendLimits {
  requestTimeoutMs: number;
  marginMs: number;
}

export const defaultSendLimits: SendLimits = { requestTimeoutMs: DEFAULT_REQUEST_TIMEOUT_MS, marginMs: 30_000 };

/** The last instant (ms) a create may begin in a call that began at `startedAt` with a time limit of `limitMs`. */
export function lastCreateStart(startedAt: number, limitMs: number, limits: SendLimits = defaultSendLimits): number {
  return startedAt + limitMs - limits.requestTimeoutMs - limits.marginMs;
}

/** Aborted at `lastStart` (ms, this process's clock), or sooner when `cancelled` is (the activity cancelled). */
export function sendStopSignal(lastStart: number, cancelled?: AbortSignal, now = Date.now()): AbortSignal {
  const byTime = AbortSignal.timeout(Math.max(0, lastStart - now));
  return cancelled ? AbortSignal.any([byTime, cancelled]) : byTime;
}

/** The call's time ran out before its create: nothing was sent. */
export class SendStopped extends PlatformFailure {
  constructor(platform: PlatformSlug) {
    super(platform, 'retryable', `${platformName(platform)}: Herald stopped this attempt before sending it, as its time was up; nothing was published.`);
    this.name = 'SendStopped';
  }
}

/** Right before a create: throws `SendStopped` once the call's time is up (`signal` absent: never). */
export function beforeCreate(platform: PlatformSlug, signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new SendStopped(platform);
}

/**
 * A wait inside a chain that leads to a create (media processing polls, renewal patience): `sleep(ms)`, the
 * adapter's own (tests shorten it), ended early by `signal`. Throws `SendStopped` when the time is up before or during
 * it, so the chain reports "not sent" at once instead of polling on towards a create it may no longer begin.
 */
export async function pauseUnlessStopped(platform: PlatformSlug, sleep: (ms: number) => Promise<void>, ms: number, signal: AbortSignal | undefined): Promise<void> {
  beforeCreate(platform, signal);
  if (!signal) return sleep(ms);
  let onAbort: (() => void) | undefined;
  const stopped = new Promise<void>((resolve) => signal.addEventListener('abort', (onAbort = () => resolve()), { once: true }));
  try {
    await Promise.race([sleep(ms), stopped]);
  } finally {
    signal.removeEventListener('abort', onAbort!);
  }
  beforeCreate(platform, signal);
}
