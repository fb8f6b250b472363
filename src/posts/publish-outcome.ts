import { platformName } from '../platforms/availability';
import type { PlatformFailure, PlatformFailureKind, PlatformSlug } from '../platforms/types';

/** What a failed attempt was publishing (a comment reply is published as a post). */
type FailedWhat = 'post' | 'first comment' | 'reply';

/** Why an attempt did not publish: the adapter's taxonomy, plus an account that can no longer send. */
export type PublishFailureKind = PlatformFailureKind | 'account_inactive';

/**
 * The sentence a failed post or first comment carries (`error_message`, the 502 message, a fan-out result's error):
 * the adapter's client-safe sentence, except where Herald knows more. An `unknown_outcome` is never repeated blindly,
 * so the user is told to look before resending.
 */
function failureSentence(platform: PlatformSlug, kind: PublishFailureKind, clientMessage: string, what: FailedWhat = 'post'): string {
  const name = platformName(platform);
  if (kind === 'unknown_outcome') {
    return `${name} did not confirm whether the ${what} was published; check the account before sending it again.`;
  }
  if (kind === 'account_inactive') return `The ${name} account is no longer connected, so the ${what} was not sent.`;
  return clientMessage;
}

/** A refused attempt as the workflows read it: what went wrong, the sentence for the client, the platform's named wait. */
export interface Refusal {
  ok: false;
  kind: PublishFailureKind;
  message: string;
  retryAfterSeconds: number | null;
}

export function refusalOf(platform: PlatformSlug, kind: PublishFailureKind, clientMessage = '', retryAfterSeconds: number | null = null, what: FailedWhat = 'post'): Refusal {
  return { ok: false, kind, message: failureSentence(platform, kind, clientMessage, what), retryAfterSeconds };
}

/** The refusal a platform's failure stands for. */
export function refusalFromFailure(platform: PlatformSlug, err: PlatformFailure, what: 'post' | 'first comment' = 'post'): Refusal {
  return refusalOf(platform, err.kind, err.clientMessage, err.retryAfterSeconds ?? null, what);
}
