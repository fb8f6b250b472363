import { TransportError, type HttpClient, type HttpRequest } from '../../net/http';
import { platformName } from '../availability';
import { PlatformFailure, type PlatformSlug } from '../types';
import type { RenewedCredential } from './types';

/**
 * One call to a token endpoint and the classification of its answer, shared by every renewer. OAuth token endpoints
 * answer a refused grant with 400 (`invalid_request`, `invalid_grant`), a bad client with 401 (`invalid_client`,
 * `unauthorized_client`), and the Graph ones with error code 190: all mean the user must reconnect. A 429 or 5xx, or
 * no answer, is transient: nothing was renewed, so the same call may be made again.
 */
export async function callTokenEndpoint(http: HttpClient, platform: PlatformSlug, request: HttpRequest): Promise<RenewedCredential> {
  const name = platformName(platform);
  let res;
  try {
    res = await http.request(request);
  } catch (err) {
    if (!(err instanceof TransportError)) throw err;
    throw new PlatformFailure(platform, 'retryable', `${name} could not be reached to renew the account's access.`, undefined, { body: err.message });
  }
  const body = (res.json ?? {}) as { access_token?: unknown; refresh_token?: unknown; expires_in?: unknown };
  const detail = { status: res.status, body: res.text.slice(0, 500) };
  if (res.status >= 200 && res.status < 300 && typeof body.access_token === 'string' && body.access_token !== '') {
    const expiresIn = Number(body.expires_in);
    return {
      accessToken: body.access_token,
      refreshToken: typeof body.refresh_token === 'string' && body.refresh_token !== '' ? body.refresh_token : undefined,
      expiresInSeconds: Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : 0,
    };
  }
  if (res.status === 429) throw new PlatformFailure(platform, 'rate_limited', `${name} is rate limiting token renewals; Herald tries again later.`, undefined, detail);
  if (res.status >= 500 || (res.status >= 200 && res.status < 300)) {
    throw new PlatformFailure(platform, 'retryable', `${name} could not renew the account's access just now; Herald tries again.`, undefined, detail);
  }
  throw new PlatformFailure(platform, 'reauthorize', `${name} refused to renew this account's access; reconnect the account.`, undefined, detail);
}

export const basicAuth = (user: string, password: string) => `Basic ${Buffer.from(`${encodeURIComponent(user)}:${encodeURIComponent(password)}`).toString('base64')}`;
