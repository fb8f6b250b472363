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
    req.log = logger.child({ request_id: id });
    const started = performance.now();
    const url = redactQuery(req.originalUrl);
    const log = (aborted: boolean) => {
      const entry = { request_id: id, req: { method: req.method, url }, res: { status: res.statusCode }, responseTime: Math.round(performance.now() - started) };
      const err = (res as unknown as { err?: unknown }).err;
      if (aborted) logger.warn(entry, 'request aborted');
      else if (err !== undefined || res.statusCode >= 500) logger.error({ ...entry, err }, 'request errored');
      else logger.info(entry, 'request completed');
    };
    res.once('finish', () => log(false));
    res.once('close', () => res.writableFinished || log(true));
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
