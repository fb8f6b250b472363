import type { HttpResponse, ResponseHeaders } from '../../net/http';
import type { TransportPolicy } from '../transport';
import { PlatformFailure, type PlatformFailureKind } from '../types';

/**
 * Every X API v2 answer is classified here, once, by HTTP status and the problem `type` X sends
 * (`https://api.x.com/2/problems/<name>` or `about:blank`), per protocols.md section 1. First matching row wins.
 */

/** `media`: the media upload endpoints, where a 403 means the token lacks upload permission (media rule 7). */
export type XScope = 'default' | 'media';

interface Row {
  status: number | 'server';
  problem?: string;
  /** X's `detail` sentence, where the status alone does not tell (a duplicate post). */
  detail?: RegExp;
  scope?: XScope;
  kind: PlatformFailureKind;
  message: string;
}

export const X_MEDIA_PERMISSION_MESSAGE =
  'X refused the media upload: this account has not granted Herald permission to upload media. Reconnect the X account to allow it; text posts are unaffected.';

/** X's 403 to a post whose text the account already posted ("duplicate content"): `createTweet` may look it up. */
export const X_DUPLICATE_MESSAGE = 'X refused the post as a duplicate of one already on the account.';

const rows: Row[] = [
  { status: 401, kind: 'reauthorize', message: "X no longer accepts this account's credentials; reconnect the account." },
  { status: 403, scope: 'media', kind: 'permanent', message: X_MEDIA_PERMISSION_MESSAGE },
  { status: 403, problem: 'client-forbidden', kind: 'permanent', message: "X refused the request: the app's X API access level does not allow it." },
  { status: 403, problem: 'not-authorized-for-resource', kind: 'permanent', message: 'X refused the request: this account may not act on that post.' },
  { status: 403, detail: /duplicate content/i, kind: 'permanent', message: X_DUPLICATE_MESSAGE },
  { status: 403, kind: 'permanent', message: 'X refused the request: the account is not allowed to do this (X also answers so for a duplicate post).' },
  { status: 400, kind: 'permanent', message: 'X refused the request as invalid.' },
  { status: 404, kind: 'gone', message: 'X has no such post.' },
  { status: 409, kind: 'permanent', message: 'X refused the request because it conflicts with the current state.' },
  { status: 429, problem: 'usage-capped', kind: 'rate_limited', message: "X's usage cap for this app is reached; try again later." },
  { status: 429, kind: 'rate_limited', message: 'X is rate limiting this account; try again later.' },
  { status: 'server', kind: 'retryable', message: 'X is having trouble; try again later.' },
];

const unexpected: Omit<Row, 'status'> = { kind: 'permanent', message: 'X gave an unexpected answer.' };

interface Problem {
  type?: string;
  title?: string;
  detail?: string;
  status?: number;
}

function problemName(type: string | undefined): string | undefined {
  if (!type || type === 'about:blank') return undefined;
  return type.slice(type.lastIndexOf('/') + 1);
}

function findRow(status: number, problem: string | undefined, scope: XScope, detail = ''): Omit<Row, 'status'> {
  return (
    rows.find(
      (r) =>
        (r.status === status || (r.status === 'server' && status >= 500)) &&
        (!r.problem || r.problem === problem) &&
        (!r.scope || r.scope === scope) &&
        (!r.detail || r.detail.test(detail)),
    ) ?? unexpected
  );
}

/** Seconds until the window named by X's own headers resets (`x-rate-limit-reset`, or the 24-hour user cap when that is the one spent). */
function retryAfterSeconds(headers: ResponseHeaders, nowMs: number): number | undefined {
  const dailySpent = headers.get('x-user-limit-24hour-remaining') === '0';
  const reset = Number(headers.get(dailySpent ? 'x-user-limit-24hour-reset' : 'x-rate-limit-reset'));
  if (!Number.isFinite(reset) || reset <= 0) return undefined;
  return Math.max(1, Math.ceil(reset - nowMs / 1000));
}

/** Returns the parsed body of a 2xx answer carrying `data`; throws the classified `PlatformFailure` otherwise. */
export function bodyOf<T>(res: HttpResponse, scope: XScope, nowMs: number): T {
  const body = (res.json ?? {}) as { data?: unknown; errors?: Problem[] } & Problem;
  const detail = { status: res.status, body: res.text.slice(0, 500) };
  if (res.status >= 200 && res.status < 300) {
    if (body.data !== undefined || !body.errors?.length) return body as T;
    // A 2xx with only `errors[]` (partial-error form): the first error's problem type decides.
    const name = problemName(body.errors[0].type);
    const row = name === 'resource-not-found' ? findRow(404, name, scope) : findRow(400, name, scope);
    throw new PlatformFailure('x', row.kind, row.message, undefined, detail);
  }
  const row = findRow(res.status, problemName(body.type), scope, body.detail);
  const wait = row.kind === 'rate_limited' ? retryAfterSeconds(res.headers, nowMs) : undefined;
  throw new PlatformFailure('x', row.kind, row.message, wait, detail);
}

/** X has no idempotency key, so a create that may have landed is `unknown_outcome` (the adapter then looks). */
export const xTransport: TransportPolicy = {
  platform: 'x',
  safeToRepeat: { creates: false, other: true },
  messages: {
    blocked: 'The X API address is refused: it is not a public https address.',
    notSent: 'X could not be reached; nothing was sent.',
    lostRepeatable: 'X did not answer in time; try again.',
    mayHaveTakenEffect: 'X did not answer in time; the {what} may or may not have been published.',
  },
};
