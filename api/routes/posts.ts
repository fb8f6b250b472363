import { z } from 'zod';
import { createPosts } from '../../src/posts/create';
import { deletePost, getPost, setHidden } from '../../src/posts/manage';
import { PostSchema } from '../../src/posts/post-view';
import { CreatePostBodySchema, DeletePostResponseSchema, FanOutResponseSchema, HidePostResponseSchema } from '../../src/posts/rules';
import { createPostsRuntime, type PostsRuntime } from '../../src/posts/runtime';
import type { AppDeps } from '../deps';
import { defineRoute } from '../route';

const runtimes = new WeakMap<AppDeps, PostsRuntime>();

/** The posts runtime of this app (adapters, media store, Temporal client...), built once per `AppDeps`. */
export function postsRuntimeOf(deps: AppDeps): PostsRuntime {
  let rt = runtimes.get(deps);
  if (!rt) {
    rt = createPostsRuntime(deps, { adapters: deps.adapters, sealedBox: deps.sealedBox, ...deps.posts });
    runtimes.set(deps, rt);
  }
  return rt;
}

const idParams = z.strictObject({ id: z.string() });
const data = <T extends z.ZodType>(schema: T) => z.object({ data: schema });

export const postsRoutes = [
  defineRoute({
    method: 'post',
    path: '/posts',
    summary: 'Create, schedule or draft a post',
    description:
      'Publishes now by default, at `schedule_at`, or saves a draft (`draft: true`). `account_ids` fans out to up to 25 accounts (201 when all succeeded, 207 otherwise). Every account is validated before anything publishes.',
    tags: ['Posts'],
    scope: 'posts:write',
    body: CreatePostBodySchema,
    idempotent: true,
    responses: {
      201: { description: 'The post (single account) or the fan-out result', schema: z.union([data(PostSchema), data(FanOutResponseSchema)]) },
      207: { description: 'Fan-out where at least one account failed', schema: data(FanOutResponseSchema) },
    },
    errors: [
      'unsupported_media',
      'first_comment_unsupported',
      'configuration_unsupported',
      'x_link_posts_require_paid_plan',
      'not_found',
      'media_not_found',
      'usage_limit_exceeded',
      'platform_coming_soon',
      'upstream_error',
      'media_storage_failed',
    ],
    handler: async ({ body, auth, deps }) => createPosts(postsRuntimeOf(deps), auth.userId, body),
  }),
  defineRoute({
    method: 'get',
    path: '/posts/:id',
    summary: 'Get a post',
    tags: ['Posts'],
    scope: 'posts:read',
    params: idParams,
    responses: { 200: { description: 'The post', schema: data(PostSchema) } },
    errors: ['not_found'],
    handler: async ({ params, auth, deps }) => getPost(postsRuntimeOf(deps), auth.userId, params.id),
  }),
  defineRoute({
    method: 'delete',
    path: '/posts/:id',
    summary: 'Delete a post',
    description: 'Published: deleted on the platform first. Scheduled: cancelled, quota returned. Draft: the whole draft goes. The record is kept with status `deleted`.',
    tags: ['Posts'],
    scope: 'posts:write',
    params: idParams,
    responses: { 200: { description: 'Deleted', schema: data(DeletePostResponseSchema) } },
    errors: ['not_found', 'post_not_editable', 'delete_unsupported', 'upstream_error'],
    handler: async ({ params, auth, deps }) => deletePost(postsRuntimeOf(deps), auth.userId, params.id),
  }),
  ...(['hide', 'unhide'] as const).map((action) =>
    defineRoute({
      method: 'post',
      path: `/posts/:id/${action}`,
      summary: action === 'hide' ? 'Hide a post from listings' : 'Show a hidden post in listings again',
      description: 'A fan-out group or a thread changes as one unit (`hidden_ids`). Nothing reaches a platform.',
      tags: ['Posts'],
      scope: 'posts:write',
      params: idParams,
      responses: { 200: { description: 'Hidden state', schema: data(HidePostResponseSchema) } },
      errors: ['not_found'],
      handler: async ({ params, auth, deps }) => setHidden(postsRuntimeOf(deps), auth.userId, params.id, action === 'hide'),
    }),
  ),
];
