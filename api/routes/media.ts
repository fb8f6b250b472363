import { z } from 'zod';
import { mediaNotFound } from '../../src/media/errors';
import { MediaSchema } from '../../src/media/routes';
import { toMediaApiShape } from '../../src/media/store';
import { removeUpload } from '../../src/posts/media-cleanup';
import { defineRoute } from '../route';
import { idParams, queryInteger } from '../validation';
import { postsRuntimeOf } from './posts';

/**
 * The uploads a user keeps (`POST /api/v1/media` is a router of its own: `src/media/routes.ts`) and the plan's media
 * storage they take (README "Media").
 */

const listMediaQuery = z.strictObject({
  limit: queryInteger({ min: 1, max: 100 }).optional().meta({ description: 'Page size, default 20, max 100' }),
  offset: queryInteger({ min: 0 }).optional().meta({ description: 'Default 0' }),
});

const StorageSchema = z.object({
  used_bytes: z.number().int().meta({ description: 'What the uploads kept take' }),
  limit_bytes: z.number().int().nullable().meta({ description: "The plan's media storage; null when unbounded" }),
});

export const mediaRoutes = [
  defineRoute({
    method: 'get',
    path: '/media',
    summary: 'List uploads',
    description:
      "The uploads you keep, newest first, and (`meta.storage`) the plan's media storage they take. No cursor: stop when a page is shorter than `limit`. Copies Herald downloads for a post's `media_urls` are not listed and do not count.",
    tags: ['Media'],
    scope: 'posts:read',
    query: listMediaQuery,
    responses: { 200: { description: 'A page of uploads', schema: z.object({ data: z.array(MediaSchema), meta: z.object({ storage: StorageSchema }) }) } },
    handler: async ({ query, auth, deps }) => {
      const store = postsRuntimeOf(deps).mediaStore;
      const [uploads, storage] = await Promise.all([
        store.listUploads(auth.userId, { limit: query.limit ?? 20, offset: query.offset ?? 0 }),
        store.storageOf(auth.userId, auth.plan),
      ]);
      const limit = Number.isFinite(storage.limitBytes) ? storage.limitBytes : null;
      return { status: 200, body: { data: uploads.map(toMediaApiShape), meta: { storage: { used_bytes: storage.usedBytes, limit_bytes: limit } } } };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/media/:id',
    summary: 'Get an upload',
    tags: ['Media'],
    scope: 'posts:read',
    params: idParams,
    errors: ['media_not_found'],
    responses: { 200: { description: 'The upload', schema: z.object({ data: MediaSchema }) } },
    handler: async ({ params, auth, deps }) => ({
      status: 200,
      body: { data: toMediaApiShape(await postsRuntimeOf(deps).mediaStore.describeUpload(auth.userId, params.id)) },
    }),
  }),
  defineRoute({
    method: 'delete',
    path: '/media/:id',
    summary: 'Delete an upload',
    description:
      "It is gone from your uploads at once: a new post naming it is 404 `media_not_found`, and it no longer counts in the plan's storage. A scheduled post that uses it still publishes it; Herald removes the file after the last such post. A draft naming it is refused when promoted.",
    tags: ['Media'],
    scope: 'posts:write',
    params: idParams,
    errors: ['media_not_found'],
    responses: { 200: { description: 'The upload as it was', schema: z.object({ data: MediaSchema }) } },
    handler: async ({ params, auth, deps }) => {
      const removed = await removeUpload(deps.db, auth.userId, params.id);
      if (!removed) throw mediaNotFound(params.id);
      return { status: 200, body: { data: toMediaApiShape(removed) } };
    },
  }),
];
