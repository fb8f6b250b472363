import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { type ErrorCode, errorStatus } from '../src/errors';
import { replayedDespite5xx } from './idempotency';
import { FileUploadSchema, MediaUploadedSchema, UrlUploadSchema } from '../src/media/routes';
import type { AnyRoute } from './route';

/** Errors any authenticated route may answer. */
const commonErrors: ErrorCode[] = ['bad_request', 'unauthorized', 'insufficient_scope', 'rate_limited', 'internal_error'];
const idempotencyErrors: ErrorCode[] = ['idempotency_key_invalid', 'idempotency_in_progress', 'idempotency_key_reused'];

const requestIdHeader = {
  'X-Request-Id': z.string().meta({ description: 'The id of this request: the one sent if it matched [A-Za-z0-9._:-]{1,128}, else generated. Quote it when reporting a problem' }),
};
const rateLimitHeaders = {
  'X-RateLimit-Limit': z.string().meta({ description: 'Requests allowed per minute for this key (by plan)' }),
  'X-RateLimit-Remaining': z.string().meta({ description: 'Requests left in the current minute' }),
  'X-RateLimit-Reset': z.string().meta({ description: 'Unix time (seconds) when the window resets' }),
};
const retryAfterHeader = {
  'Retry-After': z.string().optional().meta({ description: 'Seconds to wait: always on `rate_limited`; on another 429, or a 502 from a platform that is rate limiting, when a wait is known' }),
};
const replayHeader = {
  'Idempotent-Replay': z.string().optional().meta({ description: '`true` when this is the stored answer of an earlier request with the same Idempotency-Key' }),
};

/**
 * The headers of one response, as the middleware chain sets them: `X-Request-Id` on every answer; the rate-limit
 * headers on every answer after the key was accepted (not on 401, and not on a 5xx that failed before the limiter
 * ran); `Retry-After` on 429 and on 502 (a platform's own rate limit); `Idempotent-Replay` on what an idempotent
 * route stores (2xx-4xx, and a 5xx that reports a change made: `replayedDespite5xx`).
 */
function responseHeaders(status: number, idempotent: boolean, codes: readonly ErrorCode[] = []) {
  const rateLimit = status === 401 ? {} : status >= 500 ? Object.fromEntries(Object.entries(rateLimitHeaders).map(([name, schema]) => [name, schema.optional()])) : rateLimitHeaders;
  return z.object({
    ...requestIdHeader,
    ...rateLimit,
    ...(status === 429 || status === 502 ? retryAfterHeader : {}),
    ...(idempotent && (status < 500 || codes.some(replayedDespite5xx)) ? replayHeader : {}),
  });
}

function errorSchema(codes: ErrorCode[]) {
  return z
    .object({
      error: z.object({ code: z.enum(codes as [ErrorCode, ...ErrorCode[]]), message: z.string() }).catchall(z.unknown()),
    })
    .meta({ description: 'Error envelope' });
}

/** `/posts/:id` → `/posts/{id}`. */
function toOpenApiPath(expressPath: string): string {
  return expressPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/** What the document shows of one operation: a `defineRoute` declaration, or a route that parses its own body. */
export interface DocumentedOperation extends Pick<AnyRoute, 'method' | 'path' | 'summary' | 'description' | 'tags' | 'scope' | 'params' | 'query' | 'idempotent' | 'responses' | 'errors'> {
  /** Request body schemas by content type. */
  bodies?: Record<string, z.ZodType>;
}

/** `POST /api/v1/media` is an Express router of its own (`src/media/routes.ts`: multipart streams), so it is listed here. */
const mediaUpload: DocumentedOperation = {
  method: 'post',
  path: '/media',
  summary: 'Upload an image or video',
  description:
    "Send the file as multipart/form-data (part `file`) or JSON `{ \"url\": ... }`. Type and size are read from the bytes. The uploads you keep may take the plan's media storage (GET /api/v1/media shows it); one over it is 429 `usage_limit_exceeded`.",
  tags: ['Media'],
  scope: 'posts:write',
  bodies: { 'multipart/form-data': FileUploadSchema, 'application/json': UrlUploadSchema },
  responses: { 201: { description: 'The stored media', schema: MediaUploadedSchema } },
  errors: ['unsupported_media', 'usage_limit_exceeded', 'media_storage_failed'],
};

/** Every operation the document shows: the routes as declared (the body as the contract states it), and the media upload. */
export function documentedOperations(routes: readonly AnyRoute[]): DocumentedOperation[] {
  const declared = routes.map((route) => {
    const body = route.documentedBody ?? route.body;
    return { ...route, bodies: body ? { 'application/json': body } : undefined };
  });
  return [...declared, mediaUpload];
}

/** The OpenAPI 3.1 document of `/api/v1`, generated from the same zod schemas the routes validate with. */
export function buildOpenApiDocument(routes: readonly AnyRoute[]) {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description: 'An API key: `Authorization: Bearer hld_...`',
  });

  for (const operation of documentedOperations(routes)) registerOperation(registry, operation);

  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Herald API',
      version: '1.0.0',
      description:
        'One HTTP API to publish, schedule and draft posts and threads on social platforms. Every error is `{ "error": { "code", "message" } }`.',
    },
    servers: [{ url: '/' }],
  });
}

function registerOperation(registry: OpenAPIRegistry, route: DocumentedOperation): void {
  const codes = [...new Set([...commonErrors, ...(route.idempotent ? idempotencyErrors : []), ...(route.errors ?? [])])];
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) byStatus.set(errorStatus[code], [...(byStatus.get(errorStatus[code]) ?? []), code]);

  const idempotent = route.idempotent === true;
  const responses: Record<number, { description: string; headers: z.ZodObject; content?: Record<string, { schema: z.ZodType }> }> = {};
  for (const [status, response] of Object.entries(route.responses)) {
    responses[Number(status)] = {
      description: response.description,
      headers: responseHeaders(Number(status), idempotent),
      ...(response.schema ? { content: { 'application/json': { schema: response.schema } } } : {}),
    };
  }
  for (const [status, statusCodes] of [...byStatus.entries()].sort(([a], [b]) => a - b)) {
    responses[status] = {
      description: statusCodes.join(', '),
      headers: responseHeaders(status, idempotent, statusCodes),
      content: { 'application/json': { schema: errorSchema(statusCodes) } },
    };
  }

  registry.registerPath({
    method: route.method,
    path: `/api/v1${toOpenApiPath(route.path)}`,
    summary: route.summary,
    description: [route.description, route.scope ? `Scope: \`${route.scope}\`.` : undefined].filter(Boolean).join('\n\n') || undefined,
    tags: route.tags,
    security: [{ bearerAuth: [] }],
    request: {
      ...(route.params ? { params: route.params } : {}),
      ...(route.query ? { query: route.query } : {}),
      ...(route.idempotent
        ? {
            headers: z.object({
              'Idempotency-Key': z
                .string()
                .max(255)
                .optional()
                .meta({ description: 'Replays the first response for 24 hours (header Idempotent-Replay: true)' }),
            }),
          }
        : {}),
      ...(route.bodies
        ? { body: { required: bodyRequired(route.bodies), content: Object.fromEntries(Object.entries(route.bodies).map(([type, schema]) => [type, { schema }])) } }
        : {}),
    },
    responses,
  });
}

/** A body is required unless its schema takes none (a route whose body is `.optional()` answers without one). */
function bodyRequired(bodies: Record<string, z.ZodType>): boolean {
  return Object.values(bodies).every((schema) => !schema.safeParse(undefined).success);
}
