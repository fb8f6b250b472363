/**
 * What the three Graph stand-ins (Facebook, Instagram, Threads) share: the Graph error envelope, the
 * `access_token` parameter, field selection, cursor pages and the throttling headers (protocols.md sections 5-7).
 */
import { randomBytes } from 'node:crypto';
import { StandInReply, type RecordedRequest, type StandInResponse } from './kit';

interface GraphErrorSpec {
  status?: number;
  code: number;
  subcode?: number;
  type?: string;
  message: string;
  headers?: Record<string, string>;
}

export function graphError(spec: GraphErrorSpec): StandInResponse {
  const error: Record<string, unknown> = { message: spec.message, type: spec.type ?? 'OAuthException', code: spec.code };
  if (spec.subcode !== undefined) error.error_subcode = spec.subcode;
  error.fbtrace_id = randomBytes(8).toString('base64url');
  return { status: spec.status ?? 400, json: { error }, headers: spec.headers };
}

/** The answers the Graph catalogue documents, ready to inject. */
export const graphErrors = {
  invalidToken: () => graphError({ code: 190, message: 'Invalid OAuth access token - Cannot parse access token' }),
  expiredToken: () => graphError({ code: 190, subcode: 463, message: 'Error validating access token: Session has expired.' }),
  permission: (code = 200) => graphError({ code, status: 403, message: '(#200) The user hasn\'t authorized the application to perform this action' }),
  unknownObject: (id: string, verb = 'get') =>
    graphError({ code: 100, subcode: 33, type: 'GraphMethodException', message: `Unsupported ${verb} request. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation.` }),
  invalidParameter: (message = '(#100) Invalid parameter') => graphError({ code: 100, message }),
  transient: () => graphError({ status: 500, code: 2, message: 'An unexpected error has occurred. Please retry your request later.' }),
  /** Throttled with the Business-Use-Case header naming the wait in minutes (or without any estimate). */
  throttled: (code: 4 | 17 | 32 | 613 | 80001 | 80002, estimateMinutes?: number, id = '1234') =>
    graphError({
      code,
      message: code === 4 ? '(#4) Application request limit reached' : code === 17 ? '(#17) User request limit reached' : `(#${code}) There have been too many calls`,
      headers: {
        'x-app-usage': JSON.stringify({ call_count: 100, total_cputime: 20, total_time: 30 }),
        ...(estimateMinutes === undefined
          ? {}
          : { 'x-business-use-case-usage': JSON.stringify({ [id]: [{ type: 'pages', call_count: 100, total_cputime: 10, total_time: 12, estimated_time_to_regain_access: estimateMinutes }] }) }),
      },
    }),
};

/** A request parameter, from the form body (writes) or the query (reads). */
export function param(req: RecordedRequest, name: string): string | undefined {
  return req.form?.[name] ?? req.query[name];
}

export function requireToken(req: RecordedRequest, valid: (token: string) => boolean): string {
  const token = param(req, 'access_token');
  if (!token || !valid(token)) throw new StandInReply(graphErrors.invalidToken());
  return token;
}

/** Top-level names of a Graph `fields` list (`a,b{c,d},e` → a, b, e). */
export function fieldNames(fields: string | undefined): string[] | undefined {
  if (!fields) return undefined;
  const names: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of fields) {
    if (ch === '{' || ch === '(') depth++;
    if (ch === '}' || ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      names.push(current);
      current = '';
    } else current += ch;
  }
  names.push(current);
  return names.map((n) => n.replace(/[{(.].*$/, '').trim()).filter(Boolean);
}

/** Graph returns only the fields asked for (and always `id`). */
export function pick(obj: Record<string, unknown>, fields: string | undefined): Record<string, unknown> {
  const names = fieldNames(fields);
  if (!names) return { id: obj.id };
  const out: Record<string, unknown> = { id: obj.id };
  for (const name of names) if (obj[name] !== undefined && obj[name] !== null) out[name] = obj[name];
  return out;
}

const encodeCursor = (index: number) => Buffer.from(`cursor:${index}`).toString('base64url');
const decodeCursor = (cursor: string | undefined) => (cursor ? Number(Buffer.from(cursor, 'base64url').toString().split(':')[1]) : 0);

/** One cursor page of `items` (`limit`, `after`), with `paging.next` only when more follow. */
export function cursorPage(req: RecordedRequest, origin: string, items: Record<string, unknown>[], defaultLimit = 25): StandInResponse {
  const limit = Math.min(Number(req.query.limit ?? defaultLimit), 100);
  const start = decodeCursor(req.query.after);
  const slice = items.slice(start, start + limit);
  const body: Record<string, unknown> = { data: slice.map((item) => pick(item, req.query.fields)) };
  if (slice.length > 0) {
    const paging: Record<string, unknown> = { cursors: { before: encodeCursor(start), after: encodeCursor(start + slice.length) } };
    if (start + slice.length < items.length) {
      const next = new URL(origin + req.path);
      for (const [k, v] of Object.entries({ ...req.query, after: encodeCursor(start + slice.length) })) next.searchParams.set(k, v);
      paging.next = next.toString();
    }
    body.paging = paging;
  }
  return { json: body };
}

/** Graph timestamps look like `2026-11-21T19:30:00+0000`. */
export function graphTime(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, '+0000');
}

let counter = 1_000_000;
/** Numeric ids, unique across every Graph stand-in in the process. */
export function nextGraphId(): string {
  counter += 1;
  return `1784${String(counter).padStart(12, '0')}`;
}

/** The parts of a `PlatformFailure` tests compare whole (detail is for logs and left out). */
export function failureOf(err: unknown): { name: string; platform: string; kind: string; message: string; retryAfterSeconds: number | undefined } {
  const e = err as { name: string; platform: string; kind: string; clientMessage: string; retryAfterSeconds?: number };
  return { name: e.name, platform: e.platform, kind: e.kind, message: e.clientMessage, retryAfterSeconds: e.retryAfterSeconds };
}
