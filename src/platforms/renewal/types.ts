import type { AccountCredentials, PlatformFailure, PlatformSlug } from '../types';

/**
 * Renewing a user's token before (or when) it ends (protocols.md section 13). One renewer per platform whose
 * credentials expire; the accounts feature decides when to call it and stores what it returns.
 */

export interface RenewedCredential {
  accessToken: string;
  /** A new refresh token when the platform rotates them (x: the one sent is spent); absent: keep the stored one. */
  refreshToken?: string;
  expiresInSeconds: number;
}

/** What kind of stored account the renewer applies to. */
export interface RenewableAccount {
  via: 'instagram' | 'facebook' | null;
  own_credentials: boolean;
}

/** The static facts of `lifetimes.ts`, plus whether the app credentials are configured and the renewal call itself. */
export interface CredentialRenewer extends CredentialLifetime {
  readonly platform: PlatformSlug;
  /** False when the app credentials it needs are not configured (decisions.md: HERALD_<PLATFORM>_CLIENT_ID...). */
  readonly configured: boolean;
  /** Does this refusal of an ordinary call mean the token ended (so one renewal and one retry are worth it)? */
  isEndedTokenAnswer(failure: PlatformFailure): boolean;
  /**
   * Does this refusal of a renewal name the account's own end (so the mass-loss guard never holds it back, even among
   * many)? Only where the platform's answer says so (Graph's subcodes); elsewhere nothing in it does.
   */
  isAccountsOwnRefusal(failure: PlatformFailure): boolean;
  /**
   * Throws `PlatformFailure`: `reauthorize` when the platform refuses the renewal for good (revoked, spent or expired
   * refresh token), `retryable` or `rate_limited` for a transient fault, `RenewalSetupFailure` (also `retryable`) when
   * it refuses Herald's app credentials or request (`token-endpoint.ts`).
   */
  renew(credentials: AccountCredentials): Promise<RenewedCredential>;
}

export type CredentialRenewers = Partial<Record<PlatformSlug, CredentialRenewer>>;

/** How long one platform's token lives and how it is renewed (the data is `lifetimes.ts`). */
export interface CredentialLifetime {
  tokenLifetimeSeconds: number;
  renewsWith: 'refresh_token' | 'access_token';
  /**
   * When a token whose age is unknown (handed over at connect time) may first be renewed, counted from the connect:
   * at once where a refresh token renews it; after 24 hours where the token renews itself (only tokens at least a day
   * old may be renewed), which also learns its real end.
   */
  firstRenewalAfterS: number;
  /**
   * Whether many refusals at once are held back rather than marked lost (`src/accounts/mass-refusal.ts`), except those
   * naming the account's own end (`isAccountsOwnRefusal`): not where refusals come together for good reasons.
   */
  guardsMassRefusal: boolean;
  /** The configuration entry (`Config['credentialApps']`) renewal needs; null: the token renews itself. */
  app: 'x' | 'linkedin' | null;
  applies(account: RenewableAccount): boolean;
}
