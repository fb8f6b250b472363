import type { HttpResponse } from '../../net/http';
import type { TransportPolicy } from '../transport';
import { PlatformFailure, type CredentialRefusalRule, type PlatformFailureKind, type PlatformSlug } from '../types';
import { graphRateLimitWaitSeconds } from './usage';

/**
 * The Graph error envelope shared by Facebook, Instagram and Threads
 * (`{ error: { message, type, code, error_subcode, fbtrace_id } }`, protocols.md sections 5-7), classified once,
 * by code, here. HTTP status only decides when the body carries no Graph error.
 */

interface GraphError {
  message?: string;
  type?: string;
  code?: number;
  error_subcode?: number;
  error_user_msg?: string;
  fbtrace_id?: string;
}

/** What the caller was doing; it only chooses the wording of the client message. */
export type GraphAction = 'connect' | 'publish' | 'delete' | 'read' | 'reply' | 'hide' | 'delete_comment' | 'metrics' | 'renew';

interface Row {
  kind: PlatformFailureKind;
  /** Reason completing "<Platform> refused the post: <reason>." (the platform's name is filled in). */
  reason: string;
}

const transient: Row = { kind: 'retryable', reason: '{P} had a temporary problem; nothing was changed' };
const throttled: Row = { kind: 'rate_limited', reason: '{P} is rate limiting this account' };
const permission: Row = { kind: 'reauthorize', reason: '{P} has not granted Herald the permission this needs; reconnect the account' };

/** Rows keyed by Graph error code, then `code:subcode` for the subcodes that change the meaning. */
const byCode: Record<string, Row> = {
  '1': transient,
  '2': transient,
  '4': throttled, // application request limit
  '17': throttled, // user request limit
  '32': throttled, // Page request limit
  '613': throttled, // custom rate limit
  '80001': throttled, // Pages business-use-case throttle
  '80002': throttled, // Instagram business-use-case throttle
  '9:2207042': { kind: 'rate_limited', reason: '{P} allows no more API-published posts for this account in the last 24 hours' },
  '10': permission,
  '190': { kind: 'reauthorize', reason: '{P} no longer accepts this connection; reconnect the account' },
  '100:33': { kind: 'gone', reason: '{P} has no such object, or it was already removed' },
  '100': { kind: 'permanent', reason: '{P} did not accept a parameter of the request' },
  '368': { kind: 'permanent', reason: '{P} blocked it under its content policies' },
  '506': { kind: 'permanent', reason: 'it duplicates a recent post' },
  '1609005': { kind: 'permanent', reason: '{P} could not read the link' },
  '9004': { kind: 'permanent', reason: '{P} could not download the media from its URL' },
  '9007': { kind: 'retryable', reason: '{P} had not finished processing the media' },
  '36003': { kind: 'permanent', reason: 'the media aspect ratio is not one {P} accepts' },
};

/** Permissions are a range (200-299) in the Graph catalogue. */
function rowFor(error: GraphError): Row | undefined {
  const code = error.code;
  if (code === undefined) return undefined;
  if (error.error_subcode !== undefined && byCode[`${code}:${error.error_subcode}`]) return byCode[`${code}:${error.error_subcode}`];
  if (byCode[String(code)]) return byCode[String(code)];
  if (code >= 200 && code <= 299) return permission;
  return undefined;
}

/** Without a Graph error in the body, the HTTP status decides. */
function rowForStatus(status: number): Row {
  if (status === 429) return throttled;
  if (status === 401) return byCode['190'];
  if (status === 403) return permission;
  if (status === 404) return byCode['100:33'];
  if (status >= 500) return transient;
  return { kind: 'permanent', reason: '{P} did not accept the request' };
}

const subject: Record<GraphAction, string> = {
  connect: 'refused the connection',
  publish: 'refused the post',
  delete: 'refused to delete the post',
  read: 'refused to list the comments',
  reply: 'refused the reply',
  hide: 'refused to change the comment',
  delete_comment: 'refused to delete the comment',
  metrics: "refused to give the post's analytics",
  renew: "refused to renew this account's access",
};

export const platformNames: Record<PlatformSlug, string> = {
  x: 'X', bluesky: 'Bluesky', linkedin: 'LinkedIn', threads: 'Threads', mastodon: 'Mastodon', instagram: 'Instagram', facebook: 'Facebook', telegram: 'Telegram',
};

function graphErrorOf(body: unknown): GraphError | undefined {
  const error = (body as { error?: unknown } | undefined)?.error;
  return error && typeof error === 'object' ? (error as GraphError) : undefined;
}

/** A response is a success when its status is 2xx and it carries no Graph error. */
export function isGraphSuccess(res: HttpResponse): boolean {
  return res.status >= 200 && res.status < 300 && !graphErrorOf(res.json);
}

/** A classified Graph refusal that keeps the platform's code, for the few callers whose wording depends on it. */
export class GraphFailure extends PlatformFailure {
  constructor(
    platform: PlatformSlug,
    kind: PlatformFailureKind,
    clientMessage: string,
    retryAfterSeconds: number | undefined,
    detail: { status?: number; body?: string },
    readonly graphCode: number | undefined,
  ) {
    super(platform, kind, clientMessage, retryAfterSeconds, detail);
  }

  /** Graph's permission family: code 10 and 200-299. */
  get isPermissionError(): boolean {
    return this.graphCode === 10 || (this.graphCode !== undefined && this.graphCode >= 200 && this.graphCode <= 299);
  }
}

/**
 * `creates`: the call makes a post or comment. A transient fault (5xx, code 1 or 2) there says nothing of whether it
 * was made (Graph has answered 500 after making the post), so it is an unknown outcome the adapter looks up, never a
 * retry that could post twice.
 */
export function classifyGraphResponse(platform: PlatformSlug, res: HttpResponse, action: GraphAction, creates = false): GraphFailure {
  const error = graphErrorOf(res.json);
  const row = (error && rowFor(error)) ?? rowForStatus(res.status);
  const name = platformNames[platform];
  if (creates && row === transient) {
    const what = action === 'reply' ? 'reply' : 'post';
    return new GraphFailure(platform, 'unknown_outcome', `${name} answered with a temporary error; it may have published the ${what}.`, undefined, { status: res.status, body: res.text.slice(0, 2000) }, error?.code);
  }
  const message = `${name} ${subject[action]}: ${row.reason.replaceAll('{P}', name)}.`;
  const wait = row.kind === 'rate_limited' ? graphRateLimitWaitSeconds(res.headers) : undefined;
  return new GraphFailure(platform, row.kind, message, wait, { status: res.status, body: res.text.slice(0, 2000) }, error?.code);
}

/**
 * Code 190's subcodes that name the account's own end (protocols.md section 13): 458 app removed by the user, 460
 * password changed or session invalidated, 463 expired, 464 unconfirmed user, 467 logged out. Without one (or with
 * another code) the refusal may be Graph's or a refusal of Herald's app.
 */
const ACCOUNTS_OWN_SUBCODES: readonly number[] = [458, 460, 463, 464, 467];

const isCode190 = (body: string) => /"code"\s*:\s*190\b/.test(body);

/**
 * How Graph refuses a token, the one home of the rule (Facebook, Instagram, Threads; their renewer's "token ended"
 * answer too, `refresh.ts`): code 190, which Graph answers with HTTP 400 (protocols.md sections 5 and 13), or a 401
 * (classified as 190 when it carries no Graph error). A 190 with an own-end subcode is the account's; a bare one may
 * be Graph's outage or a refusal of Herald's app.
 */
export const graphCredentialRefusal: CredentialRefusalRule = {
  refusesCredential: (failure) => isCode190(failure.detail?.body ?? '') || failure.detail?.status === 401,
  namesAccountsOwnEnd: (failure) => {
    const body = failure.detail?.body ?? '';
    const subcode = /"error_subcode"\s*:\s*(\d+)/.exec(body)?.[1];
    return isCode190(body) && subcode !== undefined && ACCOUNTS_OWN_SUBCODES.includes(Number(subcode));
  },
};

/** A create whose answer was lost may have published; everything else Graph does is safe to send again. */
export function graphTransport(platform: PlatformSlug): TransportPolicy {
  const name = platformNames[platform];
  return {
    platform,
    safeToRepeat: { creates: false, other: true },
    messages: {
      blocked: `${name} could not be reached: its address is not allowed.`,
      notSent: `${name} could not be reached; nothing was changed.`,
      lostRepeatable: `${name} could not be reached; nothing was changed.`,
      mayHaveTakenEffect: `${name} did not answer in time; it may have published the {what}.`,
    },
  };
}
