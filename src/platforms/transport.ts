import { TransportError } from '../net/http';
import { PlatformFailure, type PlatformSlug } from './types';

/**
 * What a call that got no answer means, decided here for every adapter. `src/net/http.ts` throws `TransportError`
 * when no answer came and says whether the request surely did not leave (`not_sent`) or may have been acted on
 * (`unknown`). The one platform-specific question is whether sending such a call again is safe: each adapter answers
 * it in its own `TransportPolicy` table, by what the call does. Only the wording differs otherwise.
 *
 * - blocked by the SSRF guard: `permanent` (the address stays refused);
 * - `not_sent`: `retryable` (nothing reached the platform);
 * - `unknown`: `retryable` when the adapter's table says this kind of call is safe to repeat, else `unknown_outcome`
 *   (the caller then looks for the result or reports it unconfirmed, never repeats it blindly).
 *
 * A create answered with a server error (5xx) is the same question (`classifyCreateFailure`): the platform may have
 * made the post before failing, so where repeating a create is not safe the retry must look first.
 */

/** `creates`: the call makes something visible (a post, reply, message); `other`: reads, deletes, edits, uploads. */
type CallEffect = 'creates' | 'other';

export interface TransportPolicy {
  platform: PlatformSlug;
  /** Whether a call of this kind whose answer was lost may simply be sent again. */
  safeToRepeat: Record<CallEffect, boolean>;
  /** Client-safe sentences. `{what}` in `mayHaveTakenEffect` names the thing the call creates ("post", "reply"). */
  messages: { blocked: string; notSent: string; lostRepeatable: string; mayHaveTakenEffect: string };
}

/** The `TransportError` behind `err`, looking through `cause` chains (libraries wrap what our fetch threw). */
export function transportCause(err: unknown): TransportError | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth += 1) {
    if (e instanceof TransportError) return e;
  }
  return undefined;
}

/** Classifies a call that got no answer; anything that is not a transport failure (a programming error) is rethrown. */
export function classifyTransportFailure(policy: TransportPolicy, err: unknown, effect: CallEffect, what = 'post'): PlatformFailure {
  const transport = transportCause(err);
  if (!transport) throw err;
  const fail = (kind: PlatformFailure['kind'], message: string) =>
    new PlatformFailure(policy.platform, kind, message, undefined, { body: transport.message });
  if (transport.blocked) return fail('permanent', policy.messages.blocked);
  if (transport.phase === 'not_sent') return fail('retryable', policy.messages.notSent);
  if (policy.safeToRepeat[effect]) return fail('retryable', policy.messages.lostRepeatable);
  return fail('unknown_outcome', policy.messages.mayHaveTakenEffect.replaceAll('{what}', what));
}

/**
 * A create's refusal: a server error (5xx, which each `errors.ts` classifies `retryable`) may come after the post was
 * made, so where the adapter's table says a create is not safe to repeat it is marked `mayHaveTakenEffect`: the
 * attempt stays open and the retry looks first (`findPublished`) or is reported unconfirmed (`sendMarked`), never a
 * blind second send. Any other refusal, and anything that is not a platform's answer, is unchanged.
 */
export function classifyCreateFailure(policy: TransportPolicy, err: unknown): unknown {
  if (err instanceof PlatformFailure && err.kind === 'retryable' && !policy.safeToRepeat.creates) err.mayHaveTakenEffect = true;
  return err;
}
