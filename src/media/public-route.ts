import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Router } from 'express';
import { ApiError } from '../errors';
import type { MediaUrlSigner } from './public-url';
import type { MediaStore } from './store';

/**
 * `GET /media/:id?exp=&sig=`: serves stored media to whoever holds a valid signed URL (no API key: the platforms
 * fetching it have none). An expired, tampered or unknown URL answers the same 404, so the route reveals nothing.
 * Mount it at the root of the app, outside `/api/v1` and its authentication.
 */
export function createPublicMediaRouter(deps: { store: MediaStore; signer: MediaUrlSigner; now?: () => Date }): Router {
  const router = Router();
  router.get('/media/:id', async (req, res) => {
    const id = req.params.id;
    if (!deps.signer.verifyMediaUrlSignature(id, req.query.exp, req.query.sig, deps.now?.())) throw notFound();
    const record = await deps.store.findById(id);
    if (!record) throw notFound();

    const expiresInSeconds = Math.max(0, Number(req.query.exp) - Math.floor(Date.now() / 1000));
    res.status(200);
    res.setHeader('Content-Type', record.mimeType);
    res.setHeader('Content-Length', String(record.size));
    res.setHeader('Cache-Control', `private, max-age=${Math.min(expiresInSeconds, 3600)}`);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Accept-Ranges', 'none');
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    // Chunk by chunk from the database; a failure half-way cuts the connection (the length is already promised).
    try {
      await pipeline(Readable.from(deps.store.readChunks(record.id)), res);
    } catch (err) {
      // The platform hanging up early is its business; anything else (the database) is ours to log.
      if ((err as NodeJS.ErrnoException).code !== 'ERR_STREAM_PREMATURE_CLOSE') throw err;
    }
  });
  return router;
}

function notFound(): ApiError {
  return new ApiError('not_found', 'Not found');
}
