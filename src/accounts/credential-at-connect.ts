import type { Config } from '../config';
import { platformName } from '../platforms/availability';
import { appSettings, credentialLifetimes } from '../platforms/renewal/lifetimes';
import type { CredentialLifetime, RenewableAccount } from '../platforms/renewal/types';
import type { AccountCredentials, PlatformSlug } from '../platforms/types';

/**
 * What connecting tells about the credential's end (decisions.md "Keeping credentials alive"). No platform hands
 * over an expiry with the token, so `credential_expires_at` starts as the latest the token can live (its lifetime
 * counted from now), and the credential workflow renews a renewable one as soon as it may to learn the real end. A credential
 * Herald will not be able to renew comes with a warning saying the account will need reconnecting.
 */

export interface CredentialAtConnect {
  expiresAt: Date | null;
  renewable: boolean;
  warning: { code: 'credential_not_renewable'; message: string } | null;
}

export function credentialAtConnect(
  apps: Config['credentialApps'],
  platform: PlatformSlug,
  account: RenewableAccount,
  credentials: AccountCredentials,
  now: Date,
): CredentialAtConnect {
  const lifetime = credentialLifetimes[platform];
  if (!lifetime || !lifetime.applies(account)) return { expiresAt: null, renewable: false, warning: null };
  const expiresAt = new Date(now.getTime() + lifetime.tokenLifetimeSeconds * 1000);
  const { holdsWhatRenews, appConfigured } = whatRenews(apps, lifetime, credentials);
  if (holdsWhatRenews && appConfigured) return { expiresAt, renewable: true, warning: null };
  const name = platformName(platform);
  const lasts = lifetime.tokenLifetimeSeconds < 86_400 ? `${lifetime.tokenLifetimeSeconds / 3600} hours` : `${lifetime.tokenLifetimeSeconds / 86_400} days`;
  const message = !holdsWhatRenews
    ? `Connected without a refresh_token: ${name} access tokens last at most ${lasts}, after which this account will need reconnecting. Connect with a refresh_token to have Herald renew it.`
    : `This Herald has no ${name} app credentials (${appSettings[lifetime.app!]}) to renew the token with, so this account will need reconnecting when its token ends (${name} access tokens last at most ${lasts}).`;
  return { expiresAt, renewable: false, warning: { code: 'credential_not_renewable', message } };
}

function whatRenews(apps: Config['credentialApps'], lifetime: CredentialLifetime, credentials: AccountCredentials) {
  return { holdsWhatRenews: Boolean(credentials[lifetime.renewsWith]), appConfigured: lifetime.app === null || apps[lifetime.app] !== null };
}

/**
 * Has the stored credential ended for good (PATCH `active: true` then asks for a reconnect, as for `connection_lost`)?
 * Its end has passed and nothing can renew it: no refresh token (never given, or dropped after the platform refused
 * it), no app credentials, or a token that renews itself, which threads and instagram renew only before it ends
 * (protocols.md section 13). A refresh token renews an ended access token, so x and linkedin holding one may go on.
 */
export function credentialEndedForGood(
  apps: Config['credentialApps'],
  account: RenewableAccount & { platform: PlatformSlug; credential_expires_at: Date | null },
  credentials: AccountCredentials,
  now: Date,
): boolean {
  if (account.credential_expires_at === null || account.credential_expires_at.getTime() > now.getTime()) return false;
  const lifetime = credentialLifetimes[account.platform];
  if (!lifetime || !lifetime.applies(account)) return false;
  const { holdsWhatRenews, appConfigured } = whatRenews(apps, lifetime, credentials);
  return !holdsWhatRenews || !appConfigured || lifetime.renewsWith === 'access_token';
}
