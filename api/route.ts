import type { Request } from 'express';
import type { z } from 'zod';
import type { Scope } from '../src/auth/scopes';
import type { ErrorCode } from '../src/errors';
import type { AppDeps } from './deps';
import type { RequestAuth } from './request-auth';

/**
 * One route of `/api/v1`, declared once: its zod schemas drive both request validation and the OpenAPI document.
 * A route module exports an array of `defineRoute(...)` results and is listed in `api/routes/index.ts`.
 *
 * The pipeline `createApp` builds for each route, in order: authentication and the burst limiter (for all of
 * `/api/v1`), the route's `scope`, the JSON body (content type, size, syntax), `params`/`query`/`body` validation
 * (400 `bad_request` naming the field), the `Idempotency-Key` protocol when `idempotent`, then `handler`.
 */
interface RouteDefinition<
  P extends z.ZodObject = z.ZodObject,
  Q extends z.ZodObject = z.ZodObject,
  B extends z.ZodType = z.ZodType,
> {
  method: 'get' | 'post' | 'patch' | 'put' | 'delete';
  /** Relative to `/api/v1`, Express syntax: `/posts/:id`. */
  path: string;
  summary: string;
  description?: string;
  tags?: string[];
  /** Scope the key must hold; null = any valid key. */
  scope: Scope | null;
  params?: P;
  query?: Q;
  body?: B;
  /**
   * The body as the contract states it, for the OpenAPI document, when `body` validates more loosely so that the
   * handler answers the contract's own code (a reply without text is 400 `validation_error`, not `bad_request`).
   */
  documentedBody?: z.ZodType;
  /** The route honours `Idempotency-Key` (keyed per user). */
  idempotent?: boolean;
  /** Success responses, by status. */
  responses: Record<number, { description: string; schema?: z.ZodType }>;
  /**
   * Error codes this route answers besides the ones every route may (documented in OpenAPI); a route with `params`
   * names its 404 (`not_found`, `media_not_found`). `test/foundation/openapi-truth.test.ts` asks every route.
   */
  errors?: ErrorCode[];
  handler(input: RouteInput<z.output<P>, z.output<Q>, z.output<B>>): Promise<RouteResult>;
  /**
   * On an `idempotent` route whose handler records what it made (`claimRecordOf`): the answer from `made` when a
   * retry took over the key of a request whose process died after making it, before its answer was stored.
   */
  resume?(input: { made: unknown; auth: RequestAuth; deps: AppDeps }): Promise<RouteResult>;
}

interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  auth: RequestAuth;
  deps: AppDeps;
  req: Request;
}

export interface RouteResult {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyRoute = RouteDefinition<any, any, any>;

/** Identity with inference: `defineRoute({ ..., handler: async ({ query }) => ... })` types `query` from its schema. */
export function defineRoute<P extends z.ZodObject, Q extends z.ZodObject, B extends z.ZodType>(
  route: RouteDefinition<P, Q, B>,
): AnyRoute {
  return route as AnyRoute;
}
