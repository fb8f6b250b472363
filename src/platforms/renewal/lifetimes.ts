import type { PlatformSlug } from '../types';
import type { CredentialLifetime } from './types';

/**
 * Which credentials end, as data (protocols.md section 13): how long a token lives when nobody said, what a renewal
 * spends, which app credentials it needs, and which accounts of the platform it concerns. Facebook Page, Mastodon
 * and Telegram tokens do not end; Bluesky sessions are renewed by its adapter.
 */
const DAY_S = 24 * 60 * 60;

export const credentialLifetimes: Partial<Record<PlatformSlug, CredentialLifetime>> = {
  // OAuth 1.0a credentials (own X API keys) do not expire. Every account renews every 96 minutes: in any hour the
  // healthy renewals outnumber what users revoke, so a majority of refusals is a mass event (`guardsMassRefusal`).
  x: { tokenLifetimeSeconds: 2 * 60 * 60, renewsWith: 'refresh_token', firstRenewalAfterS: 0, guardsMassRefusal: true, app: 'x', applies: (account) => !account.own_credentials },
  // Not guarded: LinkedIn's refresh tokens end 365 days after the first authorization, together for accounts connected
  // together, and its refusal reads the same for that end, a revocation and a fault ("invalid, expired or revoked"):
  // a guard would hold those ends back for as long as they outnumber the few renewals (every ~48 days an account).
  linkedin: { tokenLifetimeSeconds: 60 * DAY_S, renewsWith: 'refresh_token', firstRenewalAfterS: 0, guardsMassRefusal: false, app: 'linkedin', applies: () => true },
  // Guarded: Graph names the account's own end in the refusal's subcode (expired, password changed, logged out, app
  // removed), which is never held (`isAccountsOwnRefusal`); a bare 190 or a permission error to many accounts at once
  // is Graph's fault or a refusal of Herald's app. Renewals are rare (every ~48 days an account), so the guard only
  // counts where enough accounts are due in an hour: it protects a large installation, not four accounts of a small one.
  threads: { tokenLifetimeSeconds: 60 * DAY_S, renewsWith: 'access_token', firstRenewalAfterS: DAY_S, guardsMassRefusal: true, app: null, applies: () => true },
  // Instagram through Facebook Login runs on Facebook tokens, which nothing renews.
  instagram: { tokenLifetimeSeconds: 60 * DAY_S, renewsWith: 'access_token', firstRenewalAfterS: DAY_S, guardsMassRefusal: true, app: null, applies: (account) => account.via === 'instagram' },
};

/** The settings that hold each app's credentials (config.ts reads them), for the messages that ask an operator to set or fix them. */
export const appSettings = { x: 'HERALD_X_CLIENT_ID and HERALD_X_CLIENT_SECRET', linkedin: 'HERALD_LINKEDIN_CLIENT_ID and HERALD_LINKEDIN_CLIENT_SECRET' } as const;
