import type { HttpClient } from '../../net/http';
import { callTokenEndpoint, oauthRefusal } from '../renewal/token-endpoint';
import { credentialLifetimes } from '../renewal/lifetimes';
import type { CredentialRenewer } from '../renewal/types';
import { PlatformFailure } from '../types';

/**
 * LinkedIn access tokens live 60 days; approved apps get a refresh token (365 days from the first authorization) that
 * `POST <oauth origin>/oauth/v2/accessToken` exchanges for a new access token, with the app's id and secret in the
 * form (protocols.md section 13). The same refresh token usually comes back; a new one replaces it when it does not.
 */
export function createLinkedInRenewer(deps: { http: HttpClient; app: { clientId: string; clientSecret: string; oauthUrl: string } | null }): CredentialRenewer {
  const refusal = oauthRefusal('linkedin', 'linkedin');
  return {
    platform: 'linkedin',
    ...credentialLifetimes.linkedin!,
    configured: deps.app !== null,
    // 401 EXPIRED_ACCESS_TOKEN (65602) and REVOKED_ACCESS_TOKEN (65601): a renewal settles which it was.
    isEndedTokenAnswer: (failure) => failure.detail?.status === 401,
    // "invalid, expired or revoked" alike (not guarded anyway: `lifetimes.ts`).
    isAccountsOwnRefusal: () => false,
    async renew(credentials) {
      const app = deps.app;
      const refreshToken = credentials.refresh_token;
      if (!app || !refreshToken) throw new PlatformFailure('linkedin', 'reauthorize', 'LinkedIn access for this account ended and Herald cannot renew it; reconnect the account.');
      return callTokenEndpoint(deps.http, 'linkedin', {
        method: 'POST',
        url: app.oauthUrl.replace(/\/+$/, '') + '/oauth/v2/accessToken',
        form: { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: app.clientId, client_secret: app.clientSecret },
      }, refusal);
    },
  };
}
