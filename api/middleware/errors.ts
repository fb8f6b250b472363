import type { ErrorRequestHandler, RequestHandler } from 'express';
import { ApiError, isApiError } from '../../src/errors';

/** Anything under `/api/v1` no route answered. */
export const unknownRoute: RequestHandler = (req) => {
  throw new ApiError('not_found', `No route ${req.method} ${req.originalUrl.split('?')[0].slice(0, 200)}`);
};

/**
 * The single error middleware: every failure leaves as the envelope `{ "error": { "code", "message" } }`.
 * - `ApiError`: its status, code, message, extra members and headers.
 * - body-parser / http-errors failures (malformed JSON, oversized body, bad charset, bad URL encoding): 400
 *   `bad_request` (413 and 415 are not in the catalogue), 404 `not_found` for 404s.
 * - Anything else: 500 `internal_error`; details go to the log only.
 */
export const errorMiddleware: ErrorRequestHandler = (err, req, res, _next) => {
  const apiError = toApiError(err);
  if (apiError.status >= 500) {
    // The access log (api/middleware/request-context.ts) logs the completed request with this error attached.
    (res as unknown as { err?: unknown }).err = err;
  }
  if (res.headersSent) {
    req.log?.error({ err }, 'error after the response started');
    res.destroy();
    return;
  }
  for (const [name, value] of Object.entries(apiError.headers)) res.setHeader(name, value);
  res.status(apiError.status).json(apiError.toEnvelope());
};

function toApiError(err: unknown): ApiError {
  if (isApiError(err)) return err;
  const httpError = err as { status?: unknown; statusCode?: unknown; type?: unknown; expose?: unknown; message?: unknown; limit?: unknown };
  const status = typeof httpError.status === 'number' ? httpError.status : httpError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    switch (httpError.type) {
      case 'entity.parse.failed':
        return new ApiError('bad_request', `Malformed JSON body: ${String(httpError.message)}`);
      case 'entity.too.large':
        return new ApiError('bad_request', `Request body is too large (the limit is ${formatBytes(httpError.limit)})`);
      case 'encoding.unsupported':
      case 'charset.unsupported':
        return new ApiError('bad_request', `Unsupported body encoding: ${String(httpError.message)}`);
      case 'request.aborted':
        return new ApiError('bad_request', 'The request body was not completely received');
      case 'request.size.invalid':
        return new ApiError('bad_request', 'The request body size does not match Content-Length');
    }
    if (status === 404) return new ApiError('not_found', 'Not found');
    const message = httpError.expose === true && typeof httpError.message === 'string' ? httpError.message : 'Bad request';
    return new ApiError('bad_request', message);
  }
  return new ApiError('internal_error', 'An unexpected error occurred; it has been logged. Quote the X-Request-Id header when reporting it');
}

function formatBytes(limit: unknown): string {
  if (typeof limit !== 'number') return 'configured limit';
  if (limit >= 1024 * 1024 && limit % (1024 * 1024) === 0) return `${limit / (1024 * 1024)} MB`;
  if (limit >= 1024 && limit % 1024 === 0) return `${limit / 1024} KB`;
  return `${limit} bytes`;
}
