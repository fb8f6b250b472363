import { createHmac, randomBytes } from 'node:crypto';

/**
 * OAuth 1.0a request signing (RFC 5849, HMAC-SHA1), for accounts connected with the user's own X API keys.
 * Only query parameters are signed: Herald sends X JSON or multipart bodies, which RFC 5849 section 3.4.1.3
 * leaves out of the signature (only urlencoded bodies count).
 */

export interface OAuth1Credentials {
  consumerKey: string;
  consumerSecret: string;
  token: string;
  tokenSecret: string;
}

/** RFC 3986 unreserved characters stay; everything else is %XX in upper case (RFC 5849 section 3.6). */
export function percentEncode(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** Section 3.4.1: METHOD & base URI & normalized parameters, each percent-encoded. */
export function signatureBaseString(method: string, url: URL, params: Array<[string, string]>): string {
  const baseUri = `${url.protocol}//${url.host.toLowerCase()}${url.pathname}`;
  const normalized = params
    .map(([k, v]) => [percentEncode(k), percentEncode(v)] as const)
    .sort(([ak, av], [bk, bv]) => (ak === bk ? (av < bv ? -1 : av > bv ? 1 : 0) : ak < bk ? -1 : 1))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  return [method.toUpperCase(), percentEncode(baseUri), percentEncode(normalized)].join('&');
}

export function hmacSha1Signature(baseString: string, consumerSecret: string, tokenSecret: string): string {
  const key = `${percentEncode(consumerSecret)}&${percentEncode(tokenSecret)}`;
  return createHmac('sha1', key).update(baseString).digest('base64');
}

interface SignOptions {
  /** Seconds since the epoch; injected by tests. */
  timestamp?: number;
  nonce?: string;
  /** urlencoded body parameters, when the body is a form (never for X API v2 calls Herald makes). */
  formParams?: Array<[string, string]>;
}

/** The `Authorization: OAuth ...` header value for one request. `url` carries the query string that will be sent. */
export function oauth1Header(method: string, url: URL, creds: OAuth1Credentials, options: SignOptions = {}): string {
  const oauthParams: Array<[string, string]> = [
    ['oauth_consumer_key', creds.consumerKey],
    ['oauth_nonce', options.nonce ?? randomBytes(16).toString('hex')],
    ['oauth_signature_method', 'HMAC-SHA1'],
    ['oauth_timestamp', String(options.timestamp ?? Math.floor(Date.now() / 1000))],
    ['oauth_token', creds.token],
    ['oauth_version', '1.0'],
  ];
  const params = [...oauthParams, ...url.searchParams.entries(), ...(options.formParams ?? [])];
  const signature = hmacSha1Signature(signatureBaseString(method, url, params), creds.consumerSecret, creds.tokenSecret);
  return (
    'OAuth ' +
    [...oauthParams, ['oauth_signature', signature] as [string, string]].map(([k, v]) => `${percentEncode(k)}="${percentEncode(v)}"`).join(', ')
  );
}
