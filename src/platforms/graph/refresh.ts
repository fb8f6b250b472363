import type { HttpClient } from '../../net/http';
import { callTokenEndpoint } from '../renewal/token-endpoint';
import { classifyGraphResponse, graphCredentialRefusal } from './errors';
import { credentialLifetimes } from '../renewal/lifetimes';
import type { CredentialRenewer } from '../renewal/types';
import { PlatformFailure } from '../types';

/**
 * Threads and Instagram (Instagram Login) long-lived tokens live 60 days and renew themselves: `GET
 * /refresh_access_token?grant_type=<th|ig>_refresh_token&access_token=<token>` on the unversioned origin, no app
 * secret (protocols.md section 13). The configured API URL carries a version segment (`/v1.0`, `/v25.0`), dropped here.
 * Instagram connected through Facebook Login runs on Facebook tokens, which nothing renews. A refusal is classified as
 * any Graph answer is: HTTP 400 also carries throttling (codes 4, 17, 32, 613) and transient faults (1, 2); 190 is a
 * dead token (`graphCredentialRefusal`, whose own-end subcodes the mass-loss guard never holds back).
 */

export function createGraphRenewer(deps: { http: HttpClient; platform: 'threads' | 'instagram'; apiUrl: string }): CredentialRenewer {
  const origin = deps.apiUrl.replace(/\/+$/, '').replace(/\/v\d+(\.\d+)?$/, '');
  const grantType = deps.platform === 'threads' ? 'th_refresh_token' : 'ig_refresh_token';
  const name = deps.platform === 'threads' ? 'Threads' : 'Instagram';
  return {
    platform: deps.platform,
    ...credentialLifetimes[deps.platform]!,
    configured: true,
    // Error code 190: the token ended (subcode 463) or was invalidated (460, 467...); a renewal settles which.
    isEndedTokenAnswer: graphCredentialRefusal.refusesCredential,
    isAccountsOwnRefusal: graphCredentialRefusal.namesAccountsOwnEnd,
    async renew(credentials) {
      const token = credentials.access_token;
      if (!token) throw new PlatformFailure(deps.platform, 'reauthorize', `${name} needs an access token; reconnect the account.`);
      return callTokenEndpoint(deps.http, deps.platform, {
        method: 'GET',
        url: `${origin}/refresh_access_token`,
        query: { grant_type: grantType, access_token: token },
      }, (res) => classifyGraphResponse(deps.platform, res, 'renew'));
    },
  };
}
