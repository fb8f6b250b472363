import express, { type Express, type RequestHandler, type Response } from 'express';
import swaggerUi from 'swagger-ui-express';
import { ApiError } from '../src/errors';
import { withRequestOrigin } from '../src/events/request-origin';
import type { AppDeps } from './deps';
import { parseIdempotencyKey, runIdempotent } from './idempotency';
import { authenticateRequests, requireScope } from './middleware/auth';
import { errorMiddleware, unknownRoute } from './middleware/errors';
import { jsonBody } from './middleware/json-body';
import { burstRateLimit } from './middleware/rate-limit';
import { requestContext } from './middleware/request-context';
import { buildOpenApiDocument } from './openapi';
import { requestAuth } from './request-auth';
import type { AnyRoute, RouteResult } from './route';
import { apiRoutes } from './routes';
import { postsRuntimeOf } from './routes/posts';
import { createMediaRouter, createPublicMediaRouter } from '../src/media';
import { mountHealth } from './routes/health';
import { parseInput } from './validation';

/**
 * The Express app: request ids and access logs, health, the OpenAPI document and its reference at `/docs`, every
 * `/api/v1` route behind authentication and the burst limiter, and the single error middleware.
 * `routes` defaults to the full list in `api/routes/index.ts`.
 */
export function createApp(deps: AppDeps, routes: readonly AnyRoute[] = apiRoutes): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');

  app.use(requestContext(deps.logger));
  mountHealth(app, deps);

  const openapi = buildOpenApiDocument(routes);
  app.get('/api/v1/openapi.json', (_req, res) => {
    res.json(openapi);
  });
  app.use('/docs', swaggerUi.serve, swaggerUi.setup(openapi, { customSiteTitle: 'Herald API reference' }));

  const v1 = express.Router();
  v1.use(authenticateRequests(deps));
  v1.use(burstRateLimit(deps.pool));
  for (const route of routes) v1[route.method](route.path, ...routeChain(route, deps));
  // The media upload parses its own body (multipart or JSON); built on first use (it needs the encryption key).
  const mediaRouter = lazy(() => {
    const rt = postsRuntimeOf(deps);
    return createMediaRouter({ store: rt.mediaStore, http: rt.http, allowInsecureUrls: deps.config.allowInsecureUrls, callerOf: requestAuth });
  });
  v1.use('/media', requireScope('posts:write'), (req, res, next) => mediaRouter()(req, res, next));
  v1.use(unknownRoute);
  app.use('/api/v1', v1);

  // Signed public media URLs for the platforms that fetch media themselves (no API key).
  const publicMedia = lazy(() => {
    const rt = postsRuntimeOf(deps);
    return createPublicMediaRouter({ store: rt.mediaStore, signer: rt.mediaUrls });
  });
  app.use((req, res, next) => (req.path.startsWith('/media/') ? publicMedia()(req, res, next) : next()));

  app.use((req) => {
    throw new ApiError('not_found', `No route ${req.method} ${req.path.slice(0, 200)}`);
  });
  app.use(errorMiddleware);
  return app;
}

function routeChain(route: AnyRoute, deps: AppDeps): RequestHandler[] {
  const chain: RequestHandler[] = [];
  if (route.scope) chain.push(requireScope(route.scope));
  if (route.method !== 'get') chain.push(...jsonBody(deps.config.bodyLimit));
  chain.push(async (req, res) => {
    const params = route.params ? parseInput(route.params, req.params, 'path') : {};
    const query = route.query ? parseInput(route.query, req.query, 'query') : noQuery(req.query);
    const body = route.body ? parseInput(route.body, req.body, 'body') : noBody(req.body);
    const auth = requestAuth(req);
    const key = route.idempotent ? parseIdempotencyKey(req.headers['idempotency-key']) : null;
    // Events the handler's changes write name this request (decisions.md "Events and webhooks"): its id is the one
    // `requestContext` chose and echoed in the X-Request-Id header (`req.id` is only pino-http's, which we do not use).
    const origin = { id: String(res.getHeader('X-Request-Id')), idempotency_key: key };
    const run = () => withRequestOrigin(origin, () => route.handler({ params, query, body, auth, deps, req }));
    const resume = route.resume && ((made: unknown) => withRequestOrigin(origin, () => route.resume!({ made, auth, deps })));

    let result: RouteResult;
    if (key === null) {
      result = await run();
    } else {
      // A route that takes no body accepts none and `{}` alike (`noBody`): the two are one request to the key too.
      const fingerprinted = route.body ? req.body : undefined;
      const outcome = await runIdempotent(
        deps,
        { userId: auth.userId, key, method: req.method, path: fingerprintPath(route, params), body: fingerprinted },
        { execute: run, resume },
        deps.idempotency,
      );
      if (outcome.replayed) res.setHeader('Idempotent-Replay', 'true');
      result = outcome.response;
    }
    // Answered already: cut at the shutdown's cap with a 503 (`closeServer` in src/main.ts); the outcome is recorded.
    if (res.headersSent) return;
    for (const [name, value] of Object.entries(result.headers ?? {})) res.setHeader(name, value);
    res.status(result.status);
    if (result.body === undefined) res.end();
    else sendJson(res, result.body);
  });
  return chain;
}

/**
 * The path the idempotency fingerprint takes: the route's pattern with its parsed params (ids lower-cased by `pathId`),
 * not the path as sent, so every spelling Express routes to one endpoint (`/posts/`, `/API/V1/posts`, an upper-case
 * id) is one request, and only another endpoint or resource is "a different path" (422 `idempotency_key_reused`).
 */
function fingerprintPath(route: AnyRoute, params: Record<string, unknown>): string {
  return `/api/v1${route.path.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => encodeURIComponent(String(params[name])))}`;
}

/**
 * The bytes and headers of Express's `res.json` (no replacer, no spaces, ETags off), without the work `res.send` does
 * for bodies of every kind (charset parsing, freshness, encoding checks) on each answer. Node leaves the body out for
 * HEAD.
 */
function sendJson(res: Response, body: unknown): void {
  const json = JSON.stringify(body);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(json));
  res.end(json);
}

function lazy<T>(build: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= build());
}

function noQuery(query: unknown): Record<string, never> {
  const names = Object.keys((query ?? {}) as object);
  if (names.length > 0) throw new ApiError('bad_request', `Unknown query parameter${names.length > 1 ? 's' : ''}: ${names.join(', ')}`);
  return {};
}

/** Routes without a body accept none, or an empty JSON object. */
function noBody(body: unknown): undefined {
  const empty = body === undefined || (typeof body === 'object' && body !== null && !Array.isArray(body) && Object.keys(body).length === 0);
  if (!empty) throw new ApiError('bad_request', 'This route takes no request body');
  return undefined;
}
