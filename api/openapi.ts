import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { type ErrorCode, errorStatus } from '../src/errors';
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
export function toOpenApiPath(expressPath: string): string {
  return expressPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/** The OpenAPI 3.1 document of `/api/v1`, generated from the same zod schemas the routes validate with. */
export function buildOpenApiDocument(routes: readonly AnyRoute[]) {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description: 'An API key: `Authorization: Bearer hld_...`',
  });

  for (const route of routes) {
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
        ...(route.body ? { body: { required: true, content: { 'application/json': { schema: route.body } } } } : {}),
      },
      responses,
    });
  }

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
