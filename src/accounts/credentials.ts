import type { SealedBox } from '../crypto/sealed-box';
import type { AccountRow } from '../db/tables/accounts';
import { ApiError } from '../errors';
import { checkServiceUrl, isAppPassword } from '../platforms/bluesky';
import { parseMastodonInstance } from '../platforms/mastodon';
import { toApiError } from '../posts/rules/violation';
import { checkTimezone } from '../posts/rules/schedule';
import type { AccountCredentials, PlatformContext } from '../platforms/types';
import type { ConnectAccountRequest } from './connect-request';

/**
 * From a parsed connect request to what the adapter's `verify` needs, and the sealing of credentials at rest.
 * Credentials are the request's secret and addressing fields, normalised (Mastodon origin, Bluesky service origin);
 * the platform's own answers (ids, origins, URNs) are `settings`, kept in clear beside them.
 */

interface PreparedConnection {
  credentials: AccountCredentials;
  via: 'instagram' | 'facebook' | null;
  ownCredentials: boolean;
  timezone: string | undefined;
}

export function prepareConnection(request: ConnectAccountRequest, options: { allowInsecureUrls: boolean }): PreparedConnection {
  const { timezone } = request;
  if (timezone !== undefined) assertTimezone(timezone);
  // Every other field of the request is a credential or addressing field the adapter reads.
  const fields = Object.fromEntries(Object.entries(request).filter(([name]) => name !== 'platform' && name !== 'timezone'));
  const prepared: PreparedConnection = { credentials: fields as AccountCredentials, via: null, ownCredentials: false, timezone };
  switch (request.platform) {
    case 'x':
      prepared.ownCredentials = request.api_key !== undefined;
      break;
    case 'bluesky': {
      if (!isAppPassword(request.app_password)) {
        throw new ApiError(
          'bluesky_app_password_required',
          'app_password must be a Bluesky app password (four groups of four lowercase letters or digits joined by hyphens, like abcd-efgh-ijkl-mnop); create one under Settings > Privacy and security > App passwords. Your account password is never accepted.',
        );
      }
      const service = checkServiceUrl(request.service_url, options.allowInsecureUrls);
      if (!service.ok) throw new ApiError('bad_request', service.message);
      prepared.credentials = { handle: request.handle.replace(/^@/, ''), app_password: request.app_password, service_url: service.serviceUrl };
      break;
    }
    case 'mastodon':
      prepared.credentials = {
        instance_url: parseMastodonInstance(request.instance_url, { allowInsecure: options.allowInsecureUrls }),
        access_token: request.access_token,
      };
      break;
    case 'instagram':
      prepared.via = request.via;
      break;
    default:
      break;
  }
  return prepared;
}

/** `timezone` on connect and on PATCH: an IANA name, the same rule `schedule_at` uses. */
export function assertTimezone(timezone: string): void {
  const violation = checkTimezone(timezone);
  if (violation) throw toApiError(violation);
}

/**
 * The user id is bound as associated data: a sealed box copied onto another user's row does not open. The account id
 * is not (one copied onto another account of the same user opens): README "Accounts" says why it stays so.
 */
export function sealCredentials(box: SealedBox, userId: string, credentials: AccountCredentials): string {
  return box.seal(JSON.stringify(credentials), userId);
}

export function openCredentials(box: SealedBox, userId: string, sealed: string): AccountCredentials {
  return JSON.parse(box.open(sealed, userId)) as AccountCredentials;
}

/** The adapter context of a stored account; null when its credentials were wiped (disconnected). */
export function platformContextOf(
  box: SealedBox,
  account: Pick<AccountRow, 'id' | 'user_id' | 'credentials_sealed' | 'settings' | 'credential_expires_at' | 'credential_refused_at'>,
): PlatformContext | null {
  if (account.credentials_sealed === null) return null;
  return {
    credentials: openCredentials(box, account.user_id, account.credentials_sealed),
    settings: { ...account.settings },
    account: { id: account.id, credentialExpiresAt: account.credential_expires_at, credentialRefusedAt: account.credential_refused_at },
  };
}
