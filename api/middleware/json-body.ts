import express, { type RequestHandler } from 'express';
import { ApiError } from '../../src/errors';

/**
 * JSON request bodies: a body must be `Content-Type: application/json` (400 `bad_request` otherwise; 415 is not in
 * the catalogue), at most `limit` large, and well-formed (the error middleware words parser failures).
 * A request without a body passes with `req.body` undefined.
 */
export function jsonBody(limit: string): RequestHandler[] {
  const parse = express.json({ limit, strict: false, type: () => true });
  const requireJson: RequestHandler = (req, res, next) => {
    if (!hasBody(req.headers)) {
      req.body = undefined;
      return next();
    }
    const contentType = req.headers['content-type'];
    const mediaType = contentType?.split(';', 1)[0].trim().toLowerCase();
    if (mediaType !== 'application/json' && !(mediaType?.startsWith('application/') && mediaType.endsWith('+json'))) {
      throw new ApiError(
        'bad_request',
        !contentType
          ? 'Missing Content-Type: send the body as JSON with Content-Type: application/json'
          : `Unsupported Content-Type ${contentType.slice(0, 100)}: send the body as JSON with Content-Type: application/json`,
      );
    }
    parse(req, res, next);
  };
  return [requireJson];
}

function hasBody(headers: Record<string, string | string[] | undefined>): boolean {
  if (headers['transfer-encoding'] !== undefined) return true;
  const length = headers['content-length'];
  return length !== undefined && length !== '0';
}
