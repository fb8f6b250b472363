import { XRPCError } from '@atproto/api';
import { classifyTransportFailure, transportCause, type TransportPolicy } from '../transport';
import { PlatformFailure, type PlatformFailureKind } from '../types';

/**
 * Every Bluesky answer is classified here, once: a table keyed by HTTP status and the XRPC `error` name
 * (protocols.md sections 2 and 11), then by status alone. `InvalidRequest` refusals of a post name the broken field;
 * a second small table turns the known ones into a sentence, since raw platform text never reaches a client.
 */

interface Row {
  kind: PlatformFailureKind;
  message: string;
}

const reconnect = (why: string): Row => ({ kind: 'reauthorize', message: `Bluesky ${why}; reconnect the account.` });

const byStatusAndError: Record<string, Row> = {
  '401 AuthenticationRequired': reconnect('refused the handle or app password'),
  '401 AuthMissing': reconnect('asked for a login again'),
  '400 InvalidToken': reconnect('no longer accepts the session of this account'),
  '400 ExpiredToken': reconnect('no longer accepts the session of this account'),
  '401 AccountTakedown': reconnect('has taken this account down'),
  '400 AccountTakedown': reconnect('has taken this account down'),
  '401 AccountDeactivated': reconnect('says this account is deactivated'),
  '400 AccountDeactivated': reconnect('says this account is deactivated'),
  '429 RateLimitExceeded': { kind: 'rate_limited', message: 'Bluesky is rate limiting this account; try again later.' },
  '400 RecordNotFound': { kind: 'gone', message: 'Bluesky no longer has this post.' },
  '400 NotFound': { kind: 'gone', message: 'Bluesky no longer has this post.' },
  // Unreferenced blobs are removed after a while; sending the request again uploads the image again.
  '400 BlobNotFound': { kind: 'retryable', message: 'Bluesky lost an uploaded image; send the request again.' },
  '400 InvalidSwap': { kind: 'retryable', message: 'Bluesky saw a concurrent change to the account; try again.' },
  '413 PayloadTooLarge': { kind: 'permanent', message: 'Bluesky refused the post: an image is too large.' },
  '502 UpstreamFailure': { kind: 'retryable', message: 'Bluesky could not reach its own services; try again later.' },
};

const byStatus: Record<number, Row> = {
  400: { kind: 'permanent', message: 'Bluesky refused the request as invalid.' },
  401: reconnect('asked for a login again'),
  403: { kind: 'permanent', message: 'Bluesky does not allow this account to do that.' },
  404: { kind: 'permanent', message: 'The Bluesky server does not offer this operation; check the service URL of the account.' },
  413: { kind: 'permanent', message: 'Bluesky refused the post: an image is too large.' },
  429: { kind: 'rate_limited', message: 'Bluesky is rate limiting this account; try again later.' },
};

/** `InvalidRequest` messages of post records (section 11), turned into sentences. First match wins. */
const invalidPostReasons: [RegExp, string][] = [
  [/text.*(?:grapheme|string) too big|grapheme too big|must not be longer than \d+ graphemes|text must not be longer than/i, 'Bluesky refused the post: the text is too long.'],
  [/images.*array too big|array too big/i, 'Bluesky refused the post: it has too many images.'],
  [/blob too big|BlobTooLarge/i, 'Bluesky refused the post: an image is too large.'],
  [/mimeType|Wrong type of file|accept/i, 'Bluesky refused the post: an image format it does not accept.'],
  [/Invalid record key|Invalid TID/i, 'Bluesky refused the record key Herald chose for the post.'],
];

const serverError: Row = { kind: 'retryable', message: 'Bluesky is having trouble; try again later.' };
const unexpected: Row = { kind: 'permanent', message: 'Bluesky gave an unexpected answer.' };

/** The XRPC error name, or undefined for answers that are not XRPC errors. */
export function xrpcErrorName(err: unknown): string | undefined {
  return err instanceof XRPCError ? err.error : undefined;
}

/** True for answers meaning "this session is no longer good" (refresh or log in again, then repeat). */
export function isSessionError(err: unknown): boolean {
  if (!(err instanceof XRPCError)) return false;
  return err.error === 'ExpiredToken' || err.error === 'InvalidToken' || err.error === 'AuthMissing';
}

function retryAfterSeconds(headers: Readonly<Record<string, string | undefined>> | undefined, now: Date): number | undefined {
  const reset = Number(headers?.['ratelimit-reset']);
  if (Number.isFinite(reset) && reset > 0) return Math.max(1, Math.ceil(reset - now.getTime() / 1000));
  const retryAfter = Number(headers?.['retry-after']);
  return Number.isFinite(retryAfter) && retryAfter >= 0 ? Math.ceil(retryAfter) : undefined;
}

/** Classifies anything the library or the HTTP client threw into a `PlatformFailure` (rethrows programming errors). */
export function classify(err: unknown, now: Date): PlatformFailure {
  if (err instanceof PlatformFailure) return err;
  if (transportCause(err)) return classifyTransportFailure(blueskyTransport, err, 'other');
  if (!(err instanceof XRPCError)) throw err;
  const status = Number(err.status);
  if (status < 100) {
    // An answer that did not match the lexicon (ResponseType.InvalidResponse / Unknown).
    return new PlatformFailure('bluesky', unexpected.kind, unexpected.message, undefined, { status, body: truncate(err.message) });
  }
  let row = byStatusAndError[`${status} ${err.error}`] ?? byStatus[status] ?? (status >= 500 ? serverError : unexpected);
  if (status === 400 && err.error === 'InvalidRequest') {
    const reason = invalidPostReasons.find(([pattern]) => pattern.test(err.message));
    if (reason) row = { kind: 'permanent', message: reason[1] };
  }
  const wait = row.kind === 'rate_limited' ? retryAfterSeconds(err.headers, now) : undefined;
  return new PlatformFailure('bluesky', row.kind, row.message, wait, { status, body: truncate(`${err.error}: ${err.message}`) });
}

/**
 * A lost answer is repeatable on Bluesky (a blob upload, a read, a session, a delete: deleting what is gone answers
 * 200): only a record create may have taken effect, and `createPost` settles that itself by reading the record back
 * under its key, `lostCreate` when it could not look. Until 2026-11-28 every lost answer was an unknown outcome, so
 * a blob upload that timed out failed a scheduled post for good with nothing sent.
 */
const blueskyTransport: TransportPolicy = {
  platform: 'bluesky',
  safeToRepeat: { creates: false, other: true },
  messages: {
    blocked: 'The Bluesky server address of this account is not allowed.',
    notSent: 'Bluesky could not be reached; nothing was sent.',
    lostRepeatable: 'Bluesky did not answer in time; try again.',
    mayHaveTakenEffect: 'Bluesky did not answer in time; the request may or may not have taken effect.',
  },
};

/** A record create whose answer was lost and whose record could not be read back: it may have taken effect. */
export function lostCreate(err: unknown): PlatformFailure {
  return new PlatformFailure('bluesky', 'unknown_outcome', blueskyTransport.messages.mayHaveTakenEffect, undefined, { body: truncate(String((err as Error)?.message ?? err)) });
}

function truncate(text: string): string {
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}
