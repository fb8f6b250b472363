import type { HttpResponse, ResponseHeaders } from '../../net/http';
import type { TransportPolicy } from '../transport';
import { PlatformFailure, type PlatformFailureKind } from '../types';

/**
 * Every Mastodon answer is classified here, once. Mastodon's status code is authoritative and its body is only
 * `{"error": "...", "error_description"?}` free text (protocols.md section 3), so rows are keyed by status, and by
 * `media` for the upload and processing endpoints.
 */

export type MastodonScope = 'default' | 'media';

interface Row {
  status: number | 'server';
  scope?: MastodonScope;
  kind: PlatformFailureKind;
  message: string;
}

const rows: Row[] = [
  { status: 400, kind: 'permanent', message: 'Mastodon refused the request as invalid.' },
  { status: 401, kind: 'reauthorize', message: "Mastodon no longer accepts this account's access token; reconnect the account." },
  // "This action is outside the authorized scopes", or a disabled login: every post would fail the same way.
  { status: 403, kind: 'reauthorize', message: 'Mastodon refused this access token for posting; reconnect the account with write permission.' },
  { status: 404, scope: 'media', kind: 'permanent', message: 'Mastodon lost the uploaded media; nothing was published.' },
  { status: 404, kind: 'gone', message: 'Mastodon has no such post.' },
  { status: 410, kind: 'reauthorize', message: 'Mastodon says this account no longer exists on the server; reconnect the account.' },
  { status: 422, scope: 'media', kind: 'permanent', message: 'Mastodon could not process the media; nothing was published.' },
  {
    status: 422,
    kind: 'permanent',
    message: 'Mastodon refused the post: the server found it invalid (for example too long for this server, or media it cannot attach).',
  },
  { status: 429, kind: 'rate_limited', message: 'Mastodon is rate limiting this account; try again later.' },
  { status: 'server', kind: 'retryable', message: 'The Mastodon server is having trouble; try again later.' },
];

const unexpected = { kind: 'permanent' as const, message: 'Mastodon gave an unexpected answer.' };

/** Seconds until `X-RateLimit-Reset`, an ISO 8601 timestamp on Mastodon (not epoch seconds). */
function retryAfterSeconds(headers: ResponseHeaders, nowMs: number): number | undefined {
  const reset = Date.parse(headers.get('x-ratelimit-reset') ?? '');
  if (Number.isNaN(reset)) return undefined;
  return Math.max(1, Math.ceil((reset - nowMs) / 1000));
}

export function failureFor(res: HttpResponse, scope: MastodonScope, nowMs: number): PlatformFailure {
  const row =
    rows.find((r) => (r.status === res.status || (r.status === 'server' && res.status >= 500)) && (!r.scope || r.scope === scope)) ?? unexpected;
  const wait = row.kind === 'rate_limited' ? retryAfterSeconds(res.headers, nowMs) : undefined;
  return new PlatformFailure('mastodon', row.kind, row.message, wait, { status: res.status, body: res.text.slice(0, 500) });
}

/**
 * Status creates carry an Idempotency-Key and media uploads are harmless to repeat, so every lost answer is
 * retryable on Mastodon.
 */
export const mastodonTransport: TransportPolicy = {
  platform: 'mastodon',
  safeToRepeat: { creates: true, other: true },
  messages: {
    blocked: 'The Mastodon server address is refused: it is not a public https address.',
    notSent: 'The Mastodon server could not be reached; nothing was sent.',
    lostRepeatable: 'The Mastodon server did not answer in time; try again.',
    mayHaveTakenEffect: 'The Mastodon server did not answer in time; the {what} may or may not have been published.',
  },
};
