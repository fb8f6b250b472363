import type { FormData, HttpClient } from '../../net/http';
import { PlatformFailure, type AccountCredentials } from '../types';
import { classifyCreateFailure, classifyTransportFailure } from '../transport';
import { bodyOf, xTransport, type XScope } from './errors';
import { oauth1Header, type OAuth1Credentials } from './oauth1';

export const X_DEFAULT_ORIGIN = 'https://api.x.com';

interface XRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  query?: Record<string, string>;
  json?: unknown;
  multipart?: FormData;
  scope?: XScope;
  /** A create X cannot deduplicate: a lost answer becomes `unknown_outcome`, a server error one that may have taken effect. */
  isCreate?: boolean;
  /** The caller giving up on the call (`HttpRequest.signal`). */
  signal?: AbortSignal;
}

export interface XClient {
  send<T>(credentials: AccountCredentials, req: XRequest): Promise<T>;
}

/**
 * Own X API keys (api_key, api_secret, access_token, access_token_secret) sign each request with OAuth 1.0a;
 * otherwise `access_token` is an OAuth 2.0 user token sent as Bearer.
 */
function authorizationFor(credentials: AccountCredentials, method: string, url: URL, nowMs: number): string {
  const { api_key, api_secret, access_token, access_token_secret } = credentials;
  if (api_key && api_secret && access_token && access_token_secret) {
    const creds: OAuth1Credentials = { consumerKey: api_key, consumerSecret: api_secret, token: access_token, tokenSecret: access_token_secret };
    return oauth1Header(method, url, creds, { timestamp: Math.floor(nowMs / 1000) });
  }
  if (access_token) return `Bearer ${access_token}`;
  throw new PlatformFailure('x', 'reauthorize', 'X credentials are missing; reconnect the account.');
}

export function createXClient(http: HttpClient, origin: string, now: () => Date): XClient {
  const base = origin.replace(/\/+$/, '');
  return {
    async send<T>(credentials: AccountCredentials, req: XRequest): Promise<T> {
      // The query goes into the URL before signing, so the signature covers exactly what is sent.
      const url = new URL(base + req.path);
      for (const [k, v] of Object.entries(req.query ?? {})) url.searchParams.set(k, v);
      const headers = { authorization: authorizationFor(credentials, req.method, url, now().getTime()) };
      let res;
      try {
        res = await http.request({ method: req.method, url, headers, json: req.json, multipart: req.multipart, signal: req.signal });
      } catch (err) {
        throw classifyTransportFailure(xTransport, err, req.isCreate ? 'creates' : 'other');
      }
      try {
        return bodyOf<T>(res, req.scope ?? 'default', now().getTime());
      } catch (err) {
        throw req.isCreate ? classifyCreateFailure(xTransport, err) : err;
      }
    },
  };
}
