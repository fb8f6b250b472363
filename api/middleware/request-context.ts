import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Logger } from '../../src/logger';

declare module 'http' {
  interface IncomingMessage {
    /** The app's logger bound to this request's `request_id`. */
    log: Logger;
  }
}

const clientRequestId = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * A request id on every request (the client's `X-Request-Id` when it is a sane token, else a UUID), echoed in the
 * `X-Request-Id` response header and bound as `request_id` to every log line of the request (`req.log`).
 * One access-log line per response: `{ request_id, req: { method, url }, res: { status }, responseTime }`, at error
 * for a 5xx (with the error the error middleware left on `res.err`), otherwise info; a client that hangs up before
 * the answer gets a "request aborted" line.
 *
 * Written by hand rather than with pino-http (issue 15): that built a child logger and serialized the whole request
 * (headers included, to be thrown away by our serializer) and wrapped the response on every request; here the access
 * line is one call with the four fields it keeps.
 */
export function requestContext(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const offered = req.headers['x-request-id'];
    const id = typeof offered === 'string' && clientRequestId.test(offered) ? offered : randomUUID();
    res.setHeader('X-Request-Id', id);
    // Built on first use: most requests log nothing but their access line, and a child logger per request was garbage.
    let child: Logger | undefined;
    Object.defineProperty(req, 'log', { get: () => (child ??= logger.child({ request_id: id })), configurable: true });
    const started = performance.now();
    // 'close' follows 'finish' on every response, answered or not: one listener, not two.
    res.once('close', () => {
      const entry = { request_id: id, req: { method: req.method, url: redactQuery(req.originalUrl) }, res: { status: res.statusCode }, responseTime: Math.round(performance.now() - started) };
      const err = (res as unknown as { err?: unknown }).err;
      if (!res.writableFinished) logger.warn(entry, 'request aborted');
      else if (err !== undefined || res.statusCode >= 500) logger.error({ ...entry, err }, 'request errored');
      else logger.info(entry, 'request completed');
    });
    next();
  };
}

/** Query strings may carry anything; log the path and the parameter names only. */
function redactQuery(url: string | undefined): string {
  if (!url) return '';
  const [path, query] = url.split('?', 2);
  if (query === undefined) return path;
  const names = query.split('&').map((pair) => pair.split('=', 1)[0]);
  return `${path}?${names.join('&')}`;
}
