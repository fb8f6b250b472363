import type { HttpResponse } from '../../net/http';
import type { TransportPolicy } from '../transport';
import { PlatformFailure, type CredentialRefusalRule, type PlatformFailureKind } from '../types';
import { postUrl } from './mapper';

/**
 * Every LinkedIn answer classified once (protocols.md section 8). LinkedIn's error body is
 * `{ status, serviceErrorCode, code, message }`; the HTTP status carries the meaning, so the table is keyed by it.
 * Rate limits are daily quotas that reset at midnight UTC with no Retry-After, so the wait is the time until then.
 */

export type LinkedInAction = 'connect' | 'publish' | 'delete' | 'read' | 'reply' | 'delete_comment' | 'metrics';

interface Row {
  kind: PlatformFailureKind;
  reason: string;
}

const byStatus: Record<number, Row> = {
  400: { kind: 'permanent', reason: 'LinkedIn did not accept the request' },
  401: { kind: 'reauthorize', reason: 'LinkedIn no longer accepts this connection; reconnect the account' },
  403: { kind: 'reauthorize', reason: 'LinkedIn has not granted Herald the permission this needs; reconnect the account' },
  404: { kind: 'gone', reason: 'LinkedIn has no such post or comment' },
  409: { kind: 'permanent', reason: 'LinkedIn reported a conflicting change; nothing was changed' },
  422: { kind: 'permanent', reason: 'LinkedIn found the content invalid or a duplicate of a recent post' },
  426: { kind: 'permanent', reason: 'LinkedIn no longer accepts the API version Herald uses' },
  429: { kind: 'rate_limited', reason: 'LinkedIn\'s daily limit for this account or application is reached' },
};
const serverError: Row = { kind: 'retryable', reason: 'LinkedIn had a temporary problem; nothing was changed' };

const subject: Record<LinkedInAction, string> = {
  connect: 'refused the connection',
  publish: 'refused the post',
  delete: 'refused to delete the post',
  read: 'refused to list the comments',
  reply: 'refused the reply',
  delete_comment: 'refused to delete the comment',
  metrics: "refused to give the post's analytics",
};

/**
 * LinkedIn's 401 names why a token is refused (protocols.md section 13, [3p]): `serviceErrorCode` 65601
 * `REVOKED_ACCESS_TOKEN` ("revoked by the user") and 65602 `EXPIRED_ACCESS_TOKEN` are the account's own end, lost at once
 * even amid many refusals; any other 401 (65600 `INVALID_ACCESS_TOKEN`, or none) may be LinkedIn's fault, held first.
 */
const ACCOUNTS_OWN_END = /"serviceErrorCode"\s*:\s*6560[12]\b|"code"\s*:\s*"(REVOKED|EXPIRED)_ACCESS_TOKEN"/;

export const linkedInCredentialRefusal: CredentialRefusalRule = {
  refusesCredential: (failure) => failure.detail?.status === 401,
  namesAccountsOwnEnd: (failure) => failure.detail?.status === 401 && ACCOUNTS_OWN_END.test(failure.detail.body ?? ''),
};

export function isLinkedInSuccess(res: HttpResponse): boolean {
  return res.status >= 200 && res.status < 300;
}

/** A create whose answer was lost may have published; everything else Herald sends LinkedIn is safe to repeat. */
export const linkedInTransport: TransportPolicy = {
  platform: 'linkedin',
  safeToRepeat: { creates: false, other: true },
  messages: {
    blocked: 'LinkedIn could not be reached: its address is not allowed.',
    notSent: 'LinkedIn could not be reached; nothing was changed.',
    lostRepeatable: 'LinkedIn could not be reached; nothing was changed.',
    mayHaveTakenEffect: 'LinkedIn did not answer in time; it may have published the {what}.',
  },
};

/** Seconds until the next 00:00 UTC, when LinkedIn's daily quotas reset. */
function secondsUntilUtcMidnight(now: Date): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return Math.ceil((next - now.getTime()) / 1000);
}

/**
 * LinkedIn's refusal of a create whose content it already has from this author: 422, `"message": "...Content is a
 * duplicate of urn:li:share:<id>"` with `errorDetails.inputErrors[].code` `DUPLICATE_POST` (protocols.md section 8;
 * the body as quoted in client issues, [3p]). The URN it names may be a post deleted since: LinkedIn keeps refusing
 * the same text for a while after a delete, naming a post that reads 404.
 */
export interface LinkedInDuplicate {
  /** The post (or item) LinkedIn says the content repeats, when its message names one. */
  urn: string | null;
}

const DUPLICATE_URN = /duplicate of (urn:li:\w+:(?:\([^()]*\)|[\w-]+))/i;

/** The duplicate refusal in an answer's status and body, else null; read from a failure's `detail` too. */
export function linkedInDuplicateOf(answer: { status?: number; body?: string } | undefined): LinkedInDuplicate | null {
  if (answer?.status !== 422 || !answer.body) return null;
  const named = DUPLICATE_URN.exec(answer.body);
  if (named) return { urn: named[1] };
  return /DUPLICATE_POST/.test(answer.body) ? { urn: null } : null;
}

/** Herald's sentence for it, naming the post LinkedIn pointed at by its public link (a raw message never reaches a client). */
function duplicateReason(duplicate: LinkedInDuplicate, action: LinkedInAction): string {
  const named = duplicate.urn && /^urn:li:(share|ugcPost):/.test(duplicate.urn) ? ` (${postUrl(duplicate.urn)})` : '';
  const what = action === 'publish' ? `a recent post of this account${named}` : 'a comment LinkedIn already has from this account';
  return `it repeats ${what}, and LinkedIn takes no duplicates; nothing was published`;
}

export function classifyLinkedInResponse(res: HttpResponse, action: LinkedInAction, now: Date): PlatformFailure {
  const duplicate = linkedInDuplicateOf({ status: res.status, body: res.text });
  if (duplicate) {
    return new PlatformFailure('linkedin', 'permanent', `LinkedIn ${subject[action]}: ${duplicateReason(duplicate, action)}.`, undefined, { status: res.status, body: res.text.slice(0, 2000) });
  }
  const row = byStatus[res.status] ?? (res.status >= 500 ? serverError : { kind: 'permanent' as const, reason: 'LinkedIn did not accept the request' });
  const wait = row.kind === 'rate_limited' ? secondsUntilUtcMidnight(now) : undefined;
  return new PlatformFailure('linkedin', row.kind, `LinkedIn ${subject[action]}: ${row.reason}.`, wait, { status: res.status, body: res.text.slice(0, 2000) });
}
