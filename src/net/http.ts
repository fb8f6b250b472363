import { Agent, FormData, type Dispatcher } from 'undici';
import { assertFetchableUrl, BlockedAddressError, publicOnlyLookup } from './address-guard';

/**
 * All outbound HTTP goes through here: platform adapters and media downloads alike. It never throws for an HTTP
 * status (callers classify statuses); it throws `TransportError` when no answer came, saying whether the request
 * can have reached the server, which is what decides between "retry" and "look before repeating a create".
 */

export interface HttpRequest {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string | URL;
  headers?: Record<string, string>;
  /** Query parameters appended to the URL. */
  query?: Record<string, string | number | boolean | undefined>;
  /** One body at most: JSON, urlencoded form, multipart, or raw bytes/text. */
  json?: unknown;
  form?: Record<string, string>;
  multipart?: FormData;
  body?: Buffer | string;
  timeoutMs?: number;
  /** Largest body read for this request (overrides the client's `maxResponseBytes`): refused from Content-Length before reading, and while streaming. */
  maxBytes?: number;
  /**
   * What a body over the cap does: `fail` (the default) throws `ResponseTooLargeError`; `truncate` stops reading at
   * the cap and answers with the first `maxBytes`, for a caller that judges the answer by its status alone.
   */
  overCap?: 'fail' | 'truncate';
  /**
   * For a caller that judges the answer by its status alone (a webhook delivery): `timeoutMs` then ends when the
   * status and headers arrive, and the body gets `bodyMs` more on its own, read up to the cap. A body that is slow,
   * endless or broken is answered as empty: the status it follows already came in time.
   */
  statusOnly?: { bodyMs: number };
  /**
   * The caller giving up on the call (an analytics read over its budget): aborting it ends the exchange as the
   * timeout does, closing the connection, so the call holds no socket and no platform work for an answer nobody reads.
   */
  signal?: AbortSignal;
}

export interface HttpResponse {
  status: number;
  headers: ResponseHeaders;
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
  bytes: Buffer;
}

/** `not_sent`: the server surely did not act (refused connection, DNS failure, blocked address). `unknown`: it may have. */
type TransportPhase = 'not_sent' | 'unknown';

export class TransportError extends Error {
  constructor(
    readonly phase: TransportPhase,
    message: string,
    readonly blocked = false,
  ) {
    super(message);
    this.name = 'TransportError';
  }
}

interface HttpClientOptions {
  /** HERALD_ALLOW_INSECURE_URLS: allow http and loopback/private addresses (development and tests only). */
  allowInsecure: boolean;
  timeoutMs?: number;
  /** Largest body read; bigger answers fail as `unknown` transport errors. */
  maxResponseBytes?: number;
  userAgent?: string;
}

export interface HttpClient {
  request(req: HttpRequest): Promise<HttpResponse>;
  close(): Promise<void>;
}

/** The answer was bigger than the request's byte cap (declared in Content-Length, or counted while reading). */
export class ResponseTooLargeError extends TransportError {
  constructor(
    readonly limit: number,
    readonly declaredBytes?: number,
  ) {
    super('unknown', `response larger than ${limit} bytes`);
    this.name = 'ResponseTooLargeError';
  }
}

/**
 * How long one request may take, answer and body, unless its caller names another (`HttpRequest.timeoutMs`): the
 * platform clients never do for a create, which is what bounds a create's end (`src/platforms/send-stop.ts`).
 */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT', 'EHOSTUNREACH', 'ENETUNREACH']);

export function createHttpClient(options: HttpClientOptions): HttpClient {
  const timeoutMs = options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const maxBytes = options.maxResponseBytes ?? 50 * 1024 * 1024;
  const dispatcher: Dispatcher = new Agent({
    connect: options.allowInsecure ? {} : { lookup: publicOnlyLookup as never },
    keepAliveTimeout: 10_000,
  });

  // undici's `request` rather than its `fetch`: no WHATWG Request, Headers or web streams around each call, which
  // were a third of the worker's CPU in a 25-account fan-out (README "Platforms").
  async function request(req: HttpRequest): Promise<HttpResponse> {
    let url: URL;
    try {
      url = assertFetchableUrl(req.url, options.allowInsecure);
    } catch (err) {
      throw new TransportError('not_sent', (err as Error).message, true);
    }
    for (const [key, value] of Object.entries(req.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    // `accept: */*` as `fetch` sent it, for servers that look for one.
    const headers: Record<string, string> = { 'user-agent': options.userAgent ?? 'Herald/1.0', accept: '*/*', ...lowerCased(req.headers) };
    let body: string | Buffer | FormData | undefined;
    if (req.json !== undefined) {
      headers['content-type'] ??= 'application/json';
      body = JSON.stringify(req.json);
    } else if (req.form) {
      headers['content-type'] ??= 'application/x-www-form-urlencoded';
      body = new URLSearchParams(req.form).toString();
    } else {
      body = req.multipart ?? req.body;
    }
    // One deadline for the whole exchange, answer and body alike, unless the status alone is the answer.
    const deadline = new AbortController();
    const abortIn = (ms: number) => setTimeout(() => deadline.abort(new TimeoutError()), ms);
    let timer = abortIn(req.timeoutMs ?? timeoutMs);
    const cancel = () => deadline.abort(new CancelledError());
    if (req.signal?.aborted) cancel();
    req.signal?.addEventListener('abort', cancel, { once: true });
    try {
      const res = await dispatcher.request({
        origin: url.origin,
        path: url.pathname + url.search,
        method: req.method ?? 'GET',
        headers,
        body,
        signal: deadline.signal,
      });
      const cap = req.maxBytes ?? maxBytes;
      if (req.statusOnly) {
        clearTimeout(timer);
        timer = abortIn(req.statusOnly.bodyMs);
        const bytes = await readCapped(res.body, cap, true).catch(() => Buffer.alloc(0));
        return answerOf(res.statusCode, new ResponseHeaders(res.headers), bytes);
      }
      const truncate = req.overCap === 'truncate';
      const declared = Number(res.headers['content-length'] ?? NaN);
      if (declared > cap && !truncate) {
        // Closing the unread body makes it emit an abort error: listened to here, or it would be uncaught.
        res.body.on('error', () => undefined).destroy();
        throw new ResponseTooLargeError(cap, declared);
      }
      return answerOf(res.statusCode, new ResponseHeaders(res.headers), await readCapped(res.body, cap, truncate));
    } catch (err) {
      throw toTransportError(err);
    } finally {
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', cancel);
    }
  }

  return { request, close: () => dispatcher.close() };
}

/** The answer's headers by lower-case name: what adapters read of them (`get`, and `forEach` to build a `Response`). */
export class ResponseHeaders {
  constructor(private readonly byName: Record<string, string | string[] | undefined>) {}

  /** As WHATWG `Headers.get`: a repeated header's values joined with ", ", null when absent. */
  get(name: string): string | null {
    const value = this.byName[name.toLowerCase()];
    if (value === undefined) return null;
    return Array.isArray(value) ? value.join(', ') : value;
  }

  forEach(each: (value: string, name: string) => void): void {
    for (const name of Object.keys(this.byName)) {
      const value = this.get(name);
      if (value !== null) each(value, name);
    }
  }
}

class TimeoutError extends Error {
  override name = 'TimeoutError';
  constructor() {
    super('request timed out');
  }
}

class CancelledError extends Error {
  override name = 'CancelledError';
  constructor() {
    super('request cancelled by its caller');
  }
}

/** Header names as HTTP/1.1 sends them either way; lower-cased so a caller's `Content-Type` is not doubled by ours. */
function lowerCased(headers: Record<string, string> | undefined): Record<string, string> {
  const lower: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) lower[name.toLowerCase()] = value;
  return lower;
}

async function readCapped(body: Dispatcher.ResponseData['body'], maxBytes: number, truncate: boolean): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    if (size + chunk.byteLength > maxBytes) {
      if (!truncate) throw new ResponseTooLargeError(maxBytes);
      chunks.push(Buffer.from(chunk).subarray(0, maxBytes - size));
      // Leaving the loop closes the unread rest, which emits an abort error: listened to here, or it would be uncaught.
      body.on('error', () => undefined);
      break;
    }
    size += chunk.byteLength;
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}

/**
 * An answer whose text and JSON are decoded when first read: a media download's bytes (up to 512 MiB) are never
 * turned into a string and parsed, which cost several times their size in heap (a 50 MB JSON array of zeros, 250 MB)
 * whenever a URL served text.
 */
function answerOf(status: number, headers: ResponseHeaders, bytes: Buffer): HttpResponse {
  let text: string | undefined;
  let json: { value: unknown } | undefined;
  return {
    status,
    headers,
    bytes,
    get text() {
      return (text ??= bytes.toString('utf8'));
    },
    get json() {
      return (json ??= { value: parseJson(this.text) }).value;
    },
  };
}

function parseJson(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function toTransportError(err: unknown): TransportError {
  if (err instanceof TransportError) return err;
  const chain: unknown[] = [];
  for (let e: unknown = err; e && chain.length < 5; e = (e as { cause?: unknown }).cause) chain.push(e);
  const blocked = chain.find((e) => e instanceof BlockedAddressError);
  if (blocked) return new TransportError('not_sent', blocked.message, true);
  const code = chain.map((e) => (e as { code?: string }).code).find((c) => typeof c === 'string');
  if (code && NOT_SENT_CODES.has(code)) return new TransportError('not_sent', `connection failed (${code})`);
  const name = (err as Error)?.name;
  if (name === 'CancelledError') return new TransportError('unknown', 'request cancelled by its caller');
  if (name === 'TimeoutError' || name === 'AbortError') return new TransportError('unknown', 'request timed out');
  return new TransportError('unknown', `connection lost (${code ?? name ?? 'unknown'})`);
}

export { FormData };
