// Temporal's HTTP API (the JSON mapping of WorkflowService and OperatorService under /api/v1, as the Temporal Web UI
// calls it through its ui-server), plus the ui-server's own routes the UI needs: /api/v1/settings and a run's
// history.json download. Optionally serves a directory of static files (the built Web UI) on the same origin.
// Routes come from the proto's HTTP annotations (http-routes.ts); bodies and answers are proto3 JSON (proto-json.ts);
// handlers are the very ones the gRPC server calls.
import { createReadStream, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import path from 'node:path';
import { status } from '@grpc/grpc-js';
import type { Engine } from './engine';
import { invalidArgument, RpcError } from './errors';
import { httpRoutes, type HttpRoute } from './http-routes';
import { operatorServiceHandlers } from './operator-service';
import { packAny, type Msg } from './proto';
import { fromJson, toJson } from './proto-json';
import type { PollContext } from './task-queues';
import { workflowServiceHandlers, type Handler } from './workflow-service';

/** The Web UI version the settings announce: the UI encodes path parameters once from 2.23.0 on. */
const WEB_UI_VERSION = '2.38.0';
const MAX_BODY_BYTES = 16 * 1024 * 1024;

interface HttpApiOptions {
  host: string;
  port: number;
  /** A built single-page app to serve for every path outside /api/ (its index.html answers unknown paths). */
  staticDir?: string;
  namespace: string;
}

// grpc-gateway's mapping of gRPC codes to HTTP statuses (runtime.HTTPStatusFromCode).
const HTTP_STATUS: Record<number, number> = {
  [status.OK]: 200,
  [status.CANCELLED]: 499,
  [status.UNKNOWN]: 500,
  [status.INVALID_ARGUMENT]: 400,
  [status.DEADLINE_EXCEEDED]: 504,
  [status.NOT_FOUND]: 404,
  [status.ALREADY_EXISTS]: 409,
  [status.PERMISSION_DENIED]: 403,
  [status.UNAUTHENTICATED]: 401,
  [status.RESOURCE_EXHAUSTED]: 429,
  [status.FAILED_PRECONDITION]: 400,
  [status.ABORTED]: 409,
  [status.OUT_OF_RANGE]: 400,
  [status.UNIMPLEMENTED]: 501,
  [status.INTERNAL]: 500,
  [status.UNAVAILABLE]: 503,
  [status.DATA_LOSS]: 500,
};

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.ttf': 'font/ttf',
  '.txt': 'text/plain; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
};

function settings(namespace: string): Msg {
  // Write actions this server cannot honour are switched off, so the UI never offers them.
  return {
    Auth: { Enabled: false, Options: null },
    BannerText: '',
    DefaultNamespace: namespace,
    ShowTemporalSystemNamespace: false,
    FeedbackURL: '',
    NotifyOnNewVersion: false,
    Codec: { Endpoint: '', PassAccessToken: false, IncludeCredentials: false },
    Version: WEB_UI_VERSION,
    DisableWriteActions: false,
    WorkflowTerminateDisabled: false,
    WorkflowCancelDisabled: false,
    WorkflowSignalDisabled: false,
    WorkflowUpdateDisabled: false,
    WorkflowResetDisabled: true,
    BatchActionsDisabled: true,
    StartWorkflowDisabled: true,
    HideWorkflowQueryErrors: false,
    RefreshWorkflowCountsDisabled: false,
    ActivityCommandsDisabled: true,
  };
}

/**
 * Sets `a.b.c` in a nested object (query parameters and path templates name nested fields that way). A repeated
 * query parameter becomes a list; a path parameter replaces what the body said, as grpc-gateway does.
 */
function setPath(target: Msg, dotted: string, value: string, replace = false): void {
  const parts = dotted.split('.').map((p) => p.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase()));
  let node = target;
  for (const part of parts.slice(0, -1)) node = node[part] = typeof node[part] === 'object' && node[part] !== null ? node[part] : {};
  const last = parts[parts.length - 1]!;
  if (last in node && !replace) node[last] = ([] as unknown[]).concat(node[last], value);
  else node[last] = value;
}

function sendJson(res: ServerResponse, statusCode: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(statusCode, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  res.end(text);
}

function sendError(res: ServerResponse, err: unknown): void {
  const rpc =
    err instanceof RpcError ? err : new RpcError(status.INTERNAL, err instanceof Error ? err.message : String(err));
  const details = rpc.detail ? [toJson('google.protobuf.Any', packAny(rpc.detail.type, rpc.detail.value))] : [];
  sendJson(res, HTTP_STATUS[rpc.code] ?? 500, { code: rpc.code, message: rpc.message, details });
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new RpcError(status.RESOURCE_EXHAUSTED, 'request body too large');
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (!text) return {};
  try {
    return JSON.parse(text);
  } catch {
    throw invalidArgument('request body is not valid JSON');
  }
}

/** The caller hung up when the response closes unfinished (a consumed request body alone also reads as destroyed). */
function pollContext(res: ServerResponse): PollContext {
  const listeners: Array<() => void> = [];
  let gone = false;
  res.on('close', () => {
    if (res.writableFinished) return;
    gone = true;
    for (const fn of listeners.splice(0)) fn();
  });
  return { cancelled: () => gone, onCancel: (fn) => listeners.push(fn) };
}

function createHttpApi(engine: Engine, options: HttpApiOptions): Server {
  const routes = httpRoutes(['temporal.api.workflowservice.v1.WorkflowService', 'temporal.api.operatorservice.v1.OperatorService']);
  const handlers: Record<string, Record<string, Handler>> = {
    'temporal.api.workflowservice.v1.WorkflowService': workflowServiceHandlers(engine),
    'temporal.api.operatorservice.v1.OperatorService': operatorServiceHandlers(engine),
  };

  async function callRoute(route: HttpRoute, params: Record<string, string>, url: URL, req: IncomingMessage, res: ServerResponse) {
    const handler = handlers[route.service]![route.method];
    if (!handler) throw new RpcError(status.UNIMPLEMENTED, `${route.method} is not implemented by temporal-dev`);
    const json: Msg = route.body === '*' ? ((await readBody(req)) as Msg) : {};
    if (route.body !== '*') for (const [key, value] of url.searchParams) setPath(json, key, value);
    if (typeof json !== 'object' || json === null || Array.isArray(json)) throw invalidArgument('request body must be a JSON object');
    for (const [field, value] of Object.entries(params)) setPath(json, field, value, true);
    const request = fromJson(route.requestType, json);
    try {
      const response = await handler(request, pollContext(res));
      if (!res.writableEnded && !res.destroyed) sendJson(res, 200, toJson(route.responseType, response));
    } finally {
      engine.scheduler.poke();
    }
  }

  async function historyJson(namespace: string, workflowId: string, runId: string, res: ServerResponse) {
    const run = engine.findRun(namespace, { workflowId, runId });
    const history = toJson('temporal.api.history.v1.History', { events: run.events });
    sendJson(res, 200, history, {
      'content-disposition': `attachment; filename="${encodeURIComponent(`${workflowId}_${runId}`)}.json"`,
    });
  }

  function serveStatic(urlPath: string, res: ServerResponse): void {
    const root = path.resolve(options.staticDir!);
    let relative: string;
    try {
      relative = decodeURIComponent(urlPath);
    } catch {
      relative = '/';
    }
    let file = path.resolve(root, `.${path.posix.normalize(relative)}`);
    if (!file.startsWith(root + path.sep) && file !== root) file = root;
    let stat = statSync(file, { throwIfNoEntry: false });
    if (stat?.isDirectory()) {
      file = path.join(file, 'index.html');
      stat = statSync(file, { throwIfNoEntry: false });
    }
    if (!stat?.isFile()) {
      file = path.join(root, 'index.html');
      stat = statSync(file, { throwIfNoEntry: false });
    }
    if (!stat?.isFile()) {
      // The directory is filled by a build that may still be running when the server starts.
      res.writeHead(503, { 'content-type': 'text/html; charset=utf-8', 'retry-after': '5', 'cache-control': 'no-store' });
      res.end('<!doctype html><meta http-equiv="refresh" content="5"><title>Temporal Web UI</title><p>The Web UI is not built yet; this page reloads until it is.</p>');
      return;
    }
    const immutable = file.includes(`${path.sep}_app${path.sep}immutable${path.sep}`);
    res.writeHead(200, {
      'content-type': CONTENT_TYPES[path.extname(file)] ?? 'application/octet-stream',
      'content-length': String(stat.size),
      'cache-control': immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
      'x-content-type-options': 'nosniff',
    });
    createReadStream(file).pipe(res);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (isLoopbackName(options.host) && !isLoopbackName(hostnameOf(req.headers.host))) {
      // DNS rebinding: a page on another name that resolves to 127.0.0.1 is same-origin with itself, so it may send
      // the write header above; a server on loopback answers only requests that name a loopback host.
      res.writeHead(403, { 'content-type': 'text/plain' }).end('this server answers only requests for localhost');
      return;
    }
    const url = new URL(req.url ?? '/', 'http://temporal-dev');
    const verb = req.method ?? 'GET';
    if (!url.pathname.startsWith('/api/')) {
      if (options.staticDir && (verb === 'GET' || verb === 'HEAD')) return serveStatic(url.pathname, res);
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    // A browser sends a custom header cross-site only after a CORS preflight, which this server never grants:
    // requiring one on writes keeps other web pages from driving terminate/signal through a visitor's browser.
    if (verb !== 'GET' && verb !== 'HEAD' && !req.headers['caller-type'] && !req.headers['x-csrf-token']) {
      throw new RpcError(status.PERMISSION_DENIED, 'write requests need a Caller-Type or X-CSRF-TOKEN header');
    }
    if (url.pathname === '/api/v1/settings' && verb === 'GET') return sendJson(res, 200, settings(options.namespace));
    const download = /^\/api\/v1\/namespaces\/([^/]+)\/workflows\/([^/]+)\/run\/([^/]+)\/history\.json$/.exec(url.pathname);
    if (download && verb === 'GET') {
      const [namespace, workflowId, runId] = download.slice(1).map(decodeURIComponent);
      return historyJson(namespace!, workflowId!, runId!, res);
    }
    let pathMatched = false;
    for (const route of routes) {
      const params = route.match(url.pathname);
      if (!params) continue;
      pathMatched = true;
      if (route.verb !== verb && !(route.verb === 'GET' && verb === 'HEAD')) continue;
      return callRoute(route, params, url, req, res);
    }
    if (pathMatched) throw new RpcError(status.UNIMPLEMENTED, `method ${verb} not allowed on ${url.pathname}`);
    throw new RpcError(status.NOT_FOUND, `no route for ${verb} ${url.pathname}`);
  }

  return createServer((req, res) => {
    handle(req, res).catch((err) => {
      if (res.headersSent) res.destroy();
      else sendError(res, err);
    });
  });
}

/** The host name of a Host header (`[::1]:8233` → `::1`), lower-cased; empty when there is none. */
function hostnameOf(hostHeader: string | undefined): string {
  if (!hostHeader) return '';
  const bracketed = /^\[([^\]]+)\]/.exec(hostHeader);
  return (bracketed ? bracketed[1]! : hostHeader.replace(/:\d+$/, '')).toLowerCase();
}

function isLoopbackName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

export async function listenHttp(engine: Engine, options: HttpApiOptions): Promise<{ server: Server; port: number }> {
  const server = createHttpApi(engine, options);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  return { server, port: typeof address === 'object' && address ? address.port : options.port };
}
