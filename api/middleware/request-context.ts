import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import { pinoHttp } from 'pino-http';
import type { Logger } from '../../src/logger';

const clientRequestId = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * A request id on every request (the client's `X-Request-Id` when it is a sane token, else a UUID), echoed in the
 * `X-Request-Id` response header and bound as `request_id` to every log line of the request (`req.log`).
 * One access-log line per response.
 */
export function requestContext(logger: Logger): RequestHandler {
  return pinoHttp({
    logger,
    quietReqLogger: true,
    customAttributeKeys: { reqId: 'request_id' },
    genReqId: (req: IncomingMessage, res: ServerResponse) => {
      const offered = req.headers['x-request-id'];
      const id = typeof offered === 'string' && clientRequestId.test(offered) ? offered : randomUUID();
      res.setHeader('X-Request-Id', id);
      return id;
    },
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'info' : 'info'),
    serializers: {
      req: (req: { id: unknown; method: string; url: string }) => ({ method: req.method, url: redactQuery(req.url) }),
      res: (res: { statusCode: number }) => ({ status: res.statusCode }),
    },
  }) as unknown as RequestHandler;
}

/** Query strings may carry anything; log the path and the parameter names only. */
function redactQuery(url: string | undefined): string {
  if (!url) return '';
  const [path, query] = url.split('?', 2);
  if (query === undefined) return path;
  const names = query.split('&').map((pair) => pair.split('=', 1)[0]);
  return `${path}?${names.join('&')}`;
}
