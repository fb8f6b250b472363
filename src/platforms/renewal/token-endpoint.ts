import { TransportError, type HttpClient, type HttpRequest, type HttpResponse } from '../../net/http';
import { platformName } from '../availability';
import { PlatformFailure, type PlatformSlug } from '../types';
import { appSettings } from './lifetimes';
import type { RenewedCredential } from './types';

/**
 * One call to a token endpoint and the classification of its answer, shared by every renewer. A refusal is one of
 * three things (decisions.md "Keeping credentials alive"):
 * - the user's credential is dead (`reauthorize`): the account is `connection_lost`;
 * - a transient fault (`retryable`, `rate_limited`; no answer at all): nothing was renewed, the same call may be made again;
 * - a refusal of Herald itself (`RenewalSetupFailure`): its app credentials, or a request the platform does not accept.
 *   Nothing says the user's credential is dead, so it is retried like a transient fault while an operator fixes it.
 * Each platform's answer is classified by the renewer's `refusal` (OAuth error codes, or the Graph classifier).
 */
/**
 * A token endpoint's answer is awaited at most this long (ms), not the platforms' 30 s: a renewal holds its account
 * row's lock while it waits (`credential-renewal.ts`), and a reconnect or switch-off of that account waits with it.
 * A token endpoint answers in well under a second; one that does not is a transient fault, retried later.
 */
const TOKEN_ENDPOINT_TIMEOUT_MS = 10_000;

export async function callTokenEndpoint(
  http: HttpClient,
  platform: PlatformSlug,
  request: HttpRequest,
  refusal: (res: HttpResponse) => PlatformFailure,
): Promise<RenewedCredential> {
  const name = platformName(platform);
  let res;
  try {
    res = await http.request({ timeoutMs: TOKEN_ENDPOINT_TIMEOUT_MS, ...request });
  } catch (err) {
    if (!(err instanceof TransportError)) throw err;
    throw new PlatformFailure(platform, 'retryable', `${name} could not be reached to renew the account's access.`, undefined, { body: err.message });
  }
  const body = (res.json ?? {}) as { access_token?: unknown; refresh_token?: unknown; expires_in?: unknown; error?: unknown };
  if (res.status >= 200 && res.status < 300) {
    if (typeof body.access_token === 'string' && body.access_token !== '') {
      const expiresIn = Number(body.expires_in);
      return {
        accessToken: body.access_token,
        refreshToken: typeof body.refresh_token === 'string' && body.refresh_token !== '' ? body.refresh_token : undefined,
        expiresInSeconds: Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : 0,
      };
    }
    if (body.error === undefined) {
      throw new PlatformFailure(platform, 'retryable', `${name} could not renew the account's access just now; Herald tries again.`, undefined, detailOf(res));
    }
  }
  const failure = refusal(res);
  // A `RenewalSetupFailure` is `retryable` too.
  if (failure.kind === 'reauthorize' || failure.kind === 'retryable' || failure.kind === 'rate_limited') throw failure;
  throw new RenewalSetupFailure(platform, 'an answer Herald does not take for a dead credential (protocols.md section 13)', detailOf(res));
}

/**
 * The platform refused the renewal for a reason on Herald's side, not the user's: its app credentials are wrong, or it
 * sent a request the platform does not accept. Retried like a transient fault (a post due meanwhile waits for the
 * credential) and logged as an error naming what to fix; never a lost connection.
 */
export class RenewalSetupFailure extends PlatformFailure {
  constructor(
    platform: PlatformSlug,
    /** What an operator should look at, for the log. */
    readonly fix: string,
    detail: { status?: number; body?: string },
  ) {
    super(platform, 'retryable', `${platformName(platform)} refused Herald's request to renew the account's access; Herald tries again.`, undefined, detail);
    this.name = 'RenewalSetupFailure';
  }
}

/**
 * RFC 6749 section 5.2 error codes as X and LinkedIn answer a refresh (protocols.md section 13). Both answer a spent,
 * revoked or expired refresh token with `invalid_request` (`invalid_grant` is also reported); the renewers always send
 * every parameter, so neither can mean a malformed request here. `invalid_client` and `unauthorized_client` (401, or
 * 400) refuse the app's client id or secret: every account of the platform would be refused alike.
 */
const deadGrantErrors = new Set(['invalid_grant', 'invalid_request']);
const clientErrors = new Set(['invalid_client', 'unauthorized_client']);

export function oauthRefusal(platform: PlatformSlug, app: keyof typeof appSettings): (res: HttpResponse) => PlatformFailure {
  const name = platformName(platform);
  return (res) => {
    const detail = detailOf(res);
    const error = (res.json as { error?: unknown } | undefined)?.error;
    if (res.status === 429) return new PlatformFailure(platform, 'rate_limited', `${name} is rate limiting token renewals; Herald tries again later.`, undefined, detail);
    if (res.status >= 500) return new PlatformFailure(platform, 'retryable', `${name} could not renew the account's access just now; Herald tries again.`, undefined, detail);
    if (typeof error === 'string' && clientErrors.has(error)) return new RenewalSetupFailure(platform, `check ${appSettings[app]}`, detail);
    if (typeof error === 'string' && deadGrantErrors.has(error)) {
      return new PlatformFailure(platform, 'reauthorize', `${name} refused to renew this account's access; reconnect the account.`, undefined, detail);
    }
    return new RenewalSetupFailure(platform, `an OAuth answer Herald does not take for a dead refresh token (${typeof error === 'string' ? error : `HTTP ${res.status}`})`, detail);
  };
}

/**
 * What is logged of a token endpoint's answer: its status and body, every member named like a token or a secret
 * blanked (a 2xx answer without an `access_token` may still carry a rotated `refresh_token`).
 */
function detailOf(res: HttpResponse): { status: number; body: string } {
  const body = res.json !== null && typeof res.json === 'object' ? JSON.stringify(res.json, (key, value) => (/token|secret/i.test(key) ? '[redacted]' : value)) : res.text;
  return { status: res.status, body: body.slice(0, 500) };
}

export const basicAuth = (user: string, password: string) => `Basic ${Buffer.from(`${encodeURIComponent(user)}:${encodeURIComponent(password)}`).toString('base64')}`;
