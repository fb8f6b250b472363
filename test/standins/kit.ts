/**
 * The common kit every platform stand-in is built on: a local HTTP server that records each request, routes it to
 * the platform's handlers, and can be told to misbehave (refuse, rate-limit with the platform's own headers, answer
 * slowly, never answer, or cut the connection) for the next matching requests.
 *
 * A stand-in is `new StandIn(name)`, then `.on(method, '/path/:param', handler)` per endpoint, then `await .start()`.
 * Handlers return `{ status, json | text | body, headers }` or throw `StandInReply` to answer early.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import busboy from 'busboy';

interface MultipartPart {
  name: string;
  value?: string;
  file?: { filename: string; mimeType: string; data: Buffer };
}

export interface RecordedRequest {
  method: string;
  path: string;
  params: Record<string, string>;
  query: Record<string, string>;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** Parsed according to content-type: JSON object, urlencoded fields, or multipart parts. */
  json?: any;
  form?: Record<string, string>;
  multipart?: MultipartPart[];
  at: number;
  /** The stand-in's clock when the request came (`StandIn.clock`): token lifetimes are judged by it. */
  now: number;
  /** When the client closed the connection before the answer was written (it gave up on the call). */
  abandonedAt?: number;
}

export interface StandInResponse {
  status?: number;
  headers?: Record<string, string>;
  json?: unknown;
  text?: string;
  body?: Buffer;
}

type Fault =
  /** Answer with `response`; with `thenHandle` the handler runs first (a server error after the effect). */
  | { kind: 'reply'; response: StandInResponse; thenHandle?: boolean }
  | { kind: 'delay'; ms: number }
  /** Accept the request and never answer (the client's timeout fires). With `thenHandle`, the handler still runs. */
  | { kind: 'hang'; thenHandle?: boolean }
  /** Destroy the socket after reading the request; with `thenHandle` the effect happens first (outcome unknown to client). */
  | { kind: 'reset'; thenHandle?: boolean };

interface FaultMatch {
  method?: string;
  path?: string | RegExp;
}

export type Handler = (req: RecordedRequest) => StandInResponse | Promise<StandInResponse>;

export class StandInReply extends Error {
  constructor(readonly response: StandInResponse) {
    super(`stand-in reply ${response.status ?? 200}`);
  }
}

interface Route {
  method: string;
  pattern: RegExp;
  keys: string[];
  handler: Handler;
}

interface PendingFault {
  match: FaultMatch;
  fault: Fault;
  remaining: number;
}

export class StandIn {
  readonly requests: RecordedRequest[] = [];
  private readonly routes: Route[] = [];
  private faults: PendingFault[] = [];
  private server?: http.Server;
  private readonly sockets = new Set<import('node:net').Socket>();
  origin = '';
  /** What "now" is for the platform (token expiry). Time-skipping tests point it at the workflow clock. */
  clock: () => number | Promise<number> = Date.now;

  constructor(readonly name: string) {}

  on(method: string, path: string, handler: Handler): this {
    const keys: string[] = [];
    const source = path
      .split('/')
      .map((segment) => {
        if (segment.startsWith(':')) {
          keys.push(segment.slice(1));
          return '([^/]+)';
        }
        return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      })
      .join('/');
    this.routes.push({ method: method.toUpperCase(), pattern: new RegExp(`^${source}$`), keys, handler });
    return this;
  }

  /** The next `times` requests matching `match` meet `fault` instead of (or before) the handler. */
  inject(match: FaultMatch, fault: Fault, times = 1): this {
    this.faults.push({ match, fault, remaining: times });
    return this;
  }

  clearFaults(): void {
    this.faults = [];
  }

  /** Recorded requests, optionally filtered. */
  calls(method?: string, path?: string | RegExp): RecordedRequest[] {
    return this.requests.filter((r) => (!method || r.method === method.toUpperCase()) && matchesPath(r.path, path));
  }

  async start(port = 0, host = '127.0.0.1'): Promise<string> {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => this.server!.listen(port, host, resolve));
    const { port: actual } = this.server.address() as AddressInfo;
    this.origin = `http://${host}:${actual}`;
    return this.origin;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private takeFault(method: string, path: string): Fault | undefined {
    const pending = this.faults.find((f) => (!f.match.method || f.match.method.toUpperCase() === method) && matchesPath(path, f.match.path));
    if (!pending) return undefined;
    pending.remaining -= 1;
    if (pending.remaining <= 0) this.faults = this.faults.filter((f) => f !== pending);
    return pending.fault;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const body = await readBody(req);
    const recorded: RecordedRequest = {
      method: (req.method ?? 'GET').toUpperCase(),
      path: url.pathname,
      params: {},
      query: Object.fromEntries(url.searchParams),
      headers: req.headers,
      body,
      at: Date.now(),
      now: await this.clock(),
    };
    await parseBody(recorded);
    this.requests.push(recorded);
    res.on('close', () => void (res.writableFinished || (recorded.abandonedAt = Date.now())));

    const fault = this.takeFault(recorded.method, recorded.path);
    if (fault?.kind === 'delay') await new Promise((r) => setTimeout(r, fault.ms));
    if (fault?.kind === 'reply') {
      if (fault.thenHandle) await this.dispatch(recorded).catch(() => undefined);
      return send(res, fault.response);
    }
    if (fault?.kind === 'hang' || fault?.kind === 'reset') {
      if (fault.thenHandle) await this.dispatch(recorded).catch(() => undefined);
      if (fault.kind === 'reset') req.socket.destroy();
      return; // hang: never answer; stop() destroys the socket
    }
    try {
      send(res, await this.dispatch(recorded));
    } catch (err) {
      if (err instanceof StandInReply) return send(res, err.response);
      send(res, { status: 500, json: { error: 'stand-in failure', message: String(err) } });
    }
  }

  private async dispatch(req: RecordedRequest): Promise<StandInResponse> {
    for (const route of this.routes) {
      if (route.method !== req.method) continue;
      const m = route.pattern.exec(req.path);
      if (!m) continue;
      route.keys.forEach((key, i) => (req.params[key] = decodeURIComponent(m[i + 1])));
      return route.handler(req);
    }
    return { status: 404, json: { error: 'not_found', message: `${this.name} stand-in has no route ${req.method} ${req.path}` } };
  }
}

function matchesPath(path: string, match?: string | RegExp): boolean {
  if (match === undefined) return true;
  return typeof match === 'string' ? path === match : match.test(path);
}

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

async function parseBody(req: RecordedRequest): Promise<void> {
  const type = String(req.headers['content-type'] ?? '');
  if (type.includes('application/json') && req.body.length) {
    try {
      req.json = JSON.parse(req.body.toString('utf8'));
    } catch {
      req.json = undefined;
    }
  } else if (type.includes('application/x-www-form-urlencoded')) {
    req.form = Object.fromEntries(new URLSearchParams(req.body.toString('utf8')));
  } else if (type.includes('multipart/form-data')) {
    req.multipart = await parseMultipart(type, req.body);
    req.form = Object.fromEntries(req.multipart.filter((p) => p.value !== undefined).map((p) => [p.name, p.value!]));
  }
}

function parseMultipart(contentType: string, body: Buffer): Promise<MultipartPart[]> {
  return new Promise((resolve, reject) => {
    const parts: MultipartPart[] = [];
    const bb = busboy({ headers: { 'content-type': contentType } });
    bb.on('field', (name, value) => parts.push({ name, value }));
    bb.on('file', (name, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => parts.push({ name, file: { filename: info.filename ?? 'blob', mimeType: info.mimeType, data: Buffer.concat(chunks) } }));
    });
    bb.on('close', () => resolve(parts));
    bb.on('error', reject);
    bb.end(body);
  });
}

function send(res: http.ServerResponse, response: StandInResponse): void {
  const headers = { ...response.headers };
  let payload: Buffer | string = '';
  if (response.json !== undefined) {
    headers['content-type'] ??= 'application/json; charset=utf-8';
    payload = JSON.stringify(response.json);
  } else if (response.text !== undefined) {
    headers['content-type'] ??= 'text/plain; charset=utf-8';
    payload = response.text;
  } else if (response.body) {
    payload = response.body;
  }
  res.writeHead(response.status ?? 200, headers);
  res.end(payload);
}
