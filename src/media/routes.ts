import express, { type Request, Router } from 'express';
import { z } from 'zod';
import { refuseNul } from '../nul-input';
import { ApiError } from '../errors';
import type { HttpClient } from '../net/http';
import type { PlanName } from '../plans';
import { mediaLimits, requireWithinLimits } from './limits';
import { ingestMediaUrl } from './ingest';
import { receiveMultipartFile } from './multipart';
import { requireDecodable } from './sniff';
import { requireStorageLeft } from './storage';
import { type MediaRecord, type MediaStore, toMediaApiShape } from './store';

/**
 * `POST /api/v1/media` (decisions.md "Media"): multipart `file` or JSON `{ "url": ... }` → 201
 * `{ data: { id, mime_type, size, width, height, duration_ms, created_at } }`, type and size read from the bytes.
 * Mount behind authentication with scope `posts:write`; `callerOf` reads the authenticated user and plan from the
 * request. The file must fit in the plan's media storage (`storage.ts`). Listing and deleting uploads are ordinary
 * routes (`api/routes/media.ts`).
 */

interface MediaRouterDeps {
  store: MediaStore;
  /** The guarded client (allowInsecure from HERALD_ALLOW_INSECURE_URLS). */
  http: HttpClient;
  allowInsecureUrls: boolean;
  callerOf(req: Request): { userId: string; plan: PlanName };
  /** Defaults to the largest file any platform takes. */
  maxBytes?: number;
  downloadTimeoutMs?: number;
  /** Longest a multipart upload may take to arrive (default 10 minutes). */
  uploadTimeoutMs?: number;
}

/** The JSON form of the upload; with the two below, also what the OpenAPI document shows (`api/openapi.ts`). */
export const UrlUploadSchema = z.strictObject({ url: z.string().min(1).meta({ description: 'Public http(s) URL of an image or video; Herald downloads it' }) });
export const FileUploadSchema = z.object({ file: z.string().meta({ format: 'binary', description: 'The image or video file' }) });
/** One kept upload, as the upload, the listing and the delete answer it. */
export const MediaSchema = z.object({
  id: z.string().meta({ description: 'Use it in `media` ({ id, alt }) or `media_ids` of a post' }),
  mime_type: z.string().meta({ description: 'Read from the bytes, not the file name' }),
  size: z.number().int().meta({ description: 'Bytes' }),
  width: z.number().int().nullable(),
  height: z.number().int().nullable(),
  duration_ms: z.number().int().nullable(),
  created_at: z.string().meta({ format: 'date-time' }),
});
export const MediaUploadedSchema = z.object({ data: MediaSchema });
const parseJson = express.json({ limit: '16kb', type: () => true });

export function createMediaRouter(deps: MediaRouterDeps): Router {
  const maxBytes = deps.maxBytes ?? mediaLimits.maxBytes;
  const router = Router();

  router.post('/', async (req, res) => {
    const { userId, plan } = deps.callerOf(req);
    const type = (req.headers['content-type'] ?? '').toLowerCase();
    let record: MediaRecord;
    try {
      await requireStorageLeft(() => deps.store.storageOf(userId, plan), plan);
      if (type.startsWith('multipart/form-data')) {
        const { bytes } = await receiveMultipartFile(req, maxBytes, deps.uploadTimeoutMs);
        record = await deps.store.store({ userId, bytes, facts: requireWithinLimits(requireDecodable(bytes)), origin: 'upload', plan });
      } else if (type.startsWith('application/json')) {
        const { url } = await readUrlBody(req);
        const ingest = { store: deps.store, http: deps.http, allowInsecureUrls: deps.allowInsecureUrls, maxBytes, timeoutMs: deps.downloadTimeoutMs };
        record = await ingestMediaUrl(ingest, { userId, url, origin: 'upload', plan });
      } else {
        throw new ApiError('bad_request', 'Send the media as multipart/form-data with a part "file", or as JSON { "url": "https://..." }');
      }
    } catch (err) {
      // A refused upload may still be streaming in: do not keep reading it on this connection.
      if (!req.complete) res.setHeader('Connection', 'close');
      throw err;
    }
    res.status(201).json({ data: toMediaApiShape(record) });
  });

  return router;
}

async function readUrlBody(req: Request): Promise<z.infer<typeof UrlUploadSchema>> {
  if (req.body === undefined) {
    await new Promise<void>((resolve, reject) => parseJson(req, req.res!, (err?: unknown) => (err ? reject(err) : resolve())));
  }
  // Before the schema, as on every route: a `url` holding U+0000 was fetched (the URL parser drops a leading or
  // trailing one) and then failed to store as a 503.
  refuseNul(req.body, 'body');
  const parsed = UrlUploadSchema.safeParse(req.body);
  if (!parsed.success) {
    throw new ApiError('bad_request', 'The JSON body must be { "url": "<http(s) URL of an image or video>" } and nothing else');
  }
  return parsed.data;
}
