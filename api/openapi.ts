import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { type ErrorCode, errorStatus } from '../src/errors';
import { FileUploadSchema, MediaUploadedSchema, UrlUploadSchema } from '../src/media/routes';
import type { AnyRoute } from './route';

/** Errors any authenticated route may answer. */
const commonErrors: ErrorCode[] = ['bad_request', 'unauthorized', 'insufficient_scope', 'rate_limited', 'internal_error'];
const idempotencyErrors: ErrorCode[] = ['idempotency_key_invalid', 'idempotency_in_progress', 'idempotency_key_reused'];

const rateLimitHeaders = z.object({
  'X-RateLimit-Limit': z.string().meta({ description: 'Requests allowed per minute for this key (by plan)' }),
  'X-RateLimit-Remaining': z.string().meta({ description: 'Requests left in the current minute' }),
  'X-RateLimit-Reset': z.string().meta({ description: 'Unix time (seconds) when the window resets' }),
});

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
interface DocumentedOperation extends Pick<AnyRoute, 'method' | 'path' | 'summary' | 'description' | 'tags' | 'scope' | 'params' | 'query' | 'idempotent' | 'responses' | 'errors'> {
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

/** The OpenAPI 3.1 document of `/api/v1`, generated from the same zod schemas the routes validate with. */
export function buildOpenApiDocument(routes: readonly AnyRoute[]) {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description: 'An API key: `Authorization: Bearer hld_...`',
  });

  for (const route of routes) {
    registerOperation(registry, { ...route, bodies: route.body ? { 'application/json': route.body } : undefined });
  }
  registerOperation(registry, mediaUpload);

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

  const responses: Record<number, { description: string; headers?: typeof rateLimitHeaders; content?: Record<string, { schema: z.ZodType }> }> = {};
  for (const [status, response] of Object.entries(route.responses)) {
    responses[Number(status)] = {
      description: response.description,
      headers: rateLimitHeaders,
      ...(response.schema ? { content: { 'application/json': { schema: response.schema } } } : {}),
    };
  }
  for (const [status, statusCodes] of [...byStatus.entries()].sort(([a], [b]) => a - b)) {
    responses[status] = {
      description: statusCodes.join(', '),
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
        ? { body: { required: true, content: Object.fromEntries(Object.entries(route.bodies).map(([type, schema]) => [type, { schema }])) } }
        : {}),
    },
    responses,
  });
}
