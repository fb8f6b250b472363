import type { PlatformSlug } from '../types';
import type { RenewableAccount } from './types';

/**
 * Which credentials end, as data (protocols.md section 13): how long a token lives when nobody said, what a renewal
 * spends, which app credentials it needs, and which accounts of the platform it concerns. Facebook Page, Mastodon
 * and Telegram tokens do not end; Bluesky sessions are renewed by its adapter.
 */
export interface CredentialLifetime {
  tokenLifetimeSeconds: number;
  renewsWith: 'refresh_token' | 'access_token';
  /**
   * When a token whose age is unknown (handed over at connect time) may first be renewed, counted from the connect:
   * at once where a refresh token renews it; after 24 hours where the token renews itself (only tokens at least a day
   * old may be renewed), which also learns its real end.
   */
  firstRenewalAfterS: number;
  /** The configuration entry (`Config['credentialApps']`) renewal needs; null: the token renews itself. */
  app: 'x' | 'linkedin' | null;
  applies(account: RenewableAccount): boolean;
}

const DAY_S = 24 * 60 * 60;

export const credentialLifetimes: Partial<Record<PlatformSlug, CredentialLifetime>> = {
  // OAuth 1.0a credentials (own X API keys) do not expire.
  x: { tokenLifetimeSeconds: 2 * 60 * 60, renewsWith: 'refresh_token', firstRenewalAfterS: 0, app: 'x', applies: (account) => !account.own_credentials },
  linkedin: { tokenLifetimeSeconds: 60 * DAY_S, renewsWith: 'refresh_token', firstRenewalAfterS: 0, app: 'linkedin', applies: () => true },
  threads: { tokenLifetimeSeconds: 60 * DAY_S, renewsWith: 'access_token', firstRenewalAfterS: DAY_S, app: null, applies: () => true },
  // Instagram through Facebook Login runs on Facebook tokens, which nothing renews.
  instagram: { tokenLifetimeSeconds: 60 * DAY_S, renewsWith: 'access_token', firstRenewalAfterS: DAY_S, app: null, applies: (account) => account.via === 'instagram' },
};
