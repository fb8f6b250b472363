import type { HttpClient } from '../../net/http';
import { basicAuth, callTokenEndpoint, oauthRefusal } from '../renewal/token-endpoint';
import { credentialLifetimes } from '../renewal/lifetimes';
import type { CredentialRenewer } from '../renewal/types';
import { PlatformFailure } from '../types';
import { X_DEFAULT_ORIGIN } from './client';

/**
 * X OAuth 2.0 user tokens live two hours; `POST /2/oauth2/token` with `grant_type=refresh_token` renews them and
 * rotates the refresh token (the one sent is spent). A confidential client authenticates with HTTP Basic; a public
 * one sends `client_id` in the body (protocols.md section 13). Own OAuth 1.0a credentials do not expire.
 */
export function createXRenewer(deps: { http: HttpClient; origin?: string; app: { clientId: string; clientSecret: string | null } | null }): CredentialRenewer {
  const url = (deps.origin ?? X_DEFAULT_ORIGIN).replace(/\/+$/, '') + '/2/oauth2/token';
  const refusal = oauthRefusal('x', 'x');
  return {
    platform: 'x',
    ...credentialLifetimes.x!,
    configured: deps.app !== null,
    // X answers 401 for an ended token and for a revoked one alike; only a renewal can tell them apart.
    isEndedTokenAnswer: (failure) => failure.detail?.status === 401,
    // `invalid_request` for a spent, revoked or unknown refresh token and for a malformed request alike.
    isAccountsOwnRefusal: () => false,
    async renew(credentials) {
      const app = deps.app;
      const refreshToken = credentials.refresh_token;
      if (!app || !refreshToken) throw new PlatformFailure('x', 'reauthorize', "X access for this account ended and Herald cannot renew it; reconnect the account.");
      const form: Record<string, string> = { grant_type: 'refresh_token', refresh_token: refreshToken };
      const headers: Record<string, string> = {};
      if (app.clientSecret) headers.authorization = basicAuth(app.clientId, app.clientSecret);
      else form.client_id = app.clientId;
      return callTokenEndpoint(deps.http, 'x', { method: 'POST', url, headers, form }, refusal);
    },
  };
}
