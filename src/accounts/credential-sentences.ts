import { platformName } from '../platforms/availability';

/**
 * What clients are told when an account's credential ended and Herald could not renew it (README "Credentials"): the
 * one home of these sentences. Each is stored as a post's `error_message` or answered in a 502, and is read only once
 * the failure is final (a post or thread sent now, a scheduled one past its hour, a first comment, a reply, a
 * delete), so none promises that Herald tries again: the caller does, or reconnects.
 */

/** The renewal keeps failing transiently (token endpoint down, Herald's app credentials wrong): nothing was sent. */
export function renewalPendingMessage(platform: string): string {
  return `${platformName(platform)} access for this account ended and Herald could not renew it just now, so nothing was sent; try again later, or reconnect the account if this goes on.`;
}

/** A scheduled post's (or thread's) refusal once it waited `CREDENTIAL_WAIT_LIMIT_MS` (the hour it names) for its account's renewal. */
export function renewalOverdueMessage(platform: string, what: 'post' | 'thread' = 'post'): string {
  return `${platformName(platform)} access for this account ended and Herald could not renew it for an hour past the ${what}'s time; reconnect the account if this goes on.`;
}

/** The platform refused the account's credential again right after renewing it (`CredentialRefusedAfterRenewal`). */
export function refusedAfterRenewalMessage(platform: string): string {
  return `${platformName(platform)} refused this account's access right after renewing it, which points to a fault at ${platformName(platform)} rather than a lost connection, so nothing was sent; try again later, or reconnect the account if this goes on.`;
}

/** The platform refused a credential nothing can renew, and Herald holds that back for now (`CredentialRefusalHeld`). */
export function refusalHeldMessage(platform: string): string {
  return `${platformName(platform)} refused this account's access, which may be a fault at ${platformName(platform)} rather than a lost connection, so nothing was sent; try again later, or reconnect the account if this goes on.`;
}
