import type { AccountInactiveReason } from '../accounts/lifecycle';
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

/**
 * An earlier call that never reported back, on a platform that cannot be asked and whose guard against a second copy
 * (its idempotency key, `PlatformAdapter.repeatedCreatesSafeForMs`) may lapse before a call sent now arrives: not
 * sent again, the user told why (the `unknown_outcome` sentence, with the reason Herald did not simply repeat it).
 */
export function unconfirmedPastRepeatGuard(platform: PlatformSlug, guardMs: number): Refusal {
  const name = platformName(platform);
  return {
    ok: false,
    kind: 'unknown_outcome',
    message: `${name} did not confirm whether the post was published, and it guards against a second copy for only ${Math.round(guardMs / 60_000)} minutes after the earlier attempt, too little to send it again safely now; check the account before sending it again.`,
    retryAfterSeconds: null,
  };
}

/** How the account ended, in `mayBeLiveAccountEnded`. */
const accountEnded: Record<AccountInactiveReason, string> = {
  account_deactivated: 'the account was switched off',
  account_disconnected: 'the account was disconnected',
  connection_lost: "the platform stopped accepting the account's credential",
};

/**
 * The `error_message` of a post whose account ended (switched off, disconnected, its credential refused) while an
 * earlier attempt of it had not reported back: it may be live, so it is `failed` saying so, never `deleted` as
 * cancelled (publishing-api.md "error_message values": a cancellation value says the service cancelled a post that
 * never went out). No platform name: the account-wide write words it once for every platform. `what`: the thing
 * that may be live, a thread's part by its place (`src/threads/account-end.ts`).
 */
export function mayBeLiveAccountEnded(reason: AccountInactiveReason, what = 'this post'): string {
  return `An earlier attempt to publish ${what} did not report back, so it may already be on the platform, and ${accountEnded[reason]} before Herald could check; check the account before sending it again.`;
}
