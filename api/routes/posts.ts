import { z } from 'zod';
import type { ErrorCode } from '../../src/errors';
import { answerMadePosts, createPosts, type MadePosts } from '../../src/posts/create';
import { deletePost, getPost, setHidden } from '../../src/posts/manage';
import { PostSchema } from '../../src/posts/post-view';
import { answerMadeFirstComment, retryFirstComment, type MadeFirstComment } from '../../src/posts/first-comment';
import { updatePost } from '../../src/posts/update';
import {
  CreatePostBodySchema,
  DeletePostResponseSchema,
  FanOutResponseSchema,
  HidePostResponseSchema,
  UpdatedPostSchema,
  UpdatePostBodySchema,
} from '../../src/posts/rules';
import { createPostsRuntime, type PostsRuntime } from '../../src/posts/runtime';
import type { AppDeps } from '../deps';
import { defineRoute } from '../route';
import { idParams } from '../validation';
import { createdPostAnswer, deletedPostAnswer, firstCommentAnswer, updatedPostAnswer } from './posts-answers';

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

const data = <T extends z.ZodType>(schema: T) => z.object({ data: schema });


/** What creating a post or a thread may answer besides the errors every route may. */
export const creationErrors: ErrorCode[] = [
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
];

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
    errors: creationErrors,
    handler: async ({ body, auth, deps }) => createdPostAnswer(await createPosts(postsRuntimeOf(deps), auth.userId, body)),
    resume: async ({ made, deps }) => createdPostAnswer(await answerMadePosts(postsRuntimeOf(deps), made as MadePosts)),
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
    handler: async ({ params, auth, deps }) => ({ status: 200, body: { data: await getPost(postsRuntimeOf(deps), auth.userId, params.id) } }),
  }),
  defineRoute({
    method: 'patch',
    path: '/posts/:id',
    summary: 'Edit a scheduled post or a draft; promote a draft',
    description:
      'Only what is sent changes. `schedule_at` moves a scheduled post; on a draft it promotes it (unless `draft: true`), as does `publish: true`: a new post with a new id and `promoted_from_draft_id`.',
    tags: ['Posts'],
    scope: 'posts:write',
    params: idParams,
    body: UpdatePostBodySchema,
    responses: { 200: { description: 'The post after the change (the new post on promotion)', schema: data(UpdatedPostSchema) } },
    errors: [
      'not_found',
      'post_not_editable',
      'unsupported_media',
      'first_comment_unsupported',
      'configuration_unsupported',
      'x_link_posts_require_paid_plan',
      'media_not_found',
      'usage_limit_exceeded',
      'upstream_error',
    ],
    handler: async ({ params, body, auth, deps }) => updatedPostAnswer(await updatePost(postsRuntimeOf(deps), auth.userId, params.id, body)),
  }),
  defineRoute({
    method: 'post',
    path: '/posts/:id/first-comment',
    summary: 'Retry a failed first comment',
    description: 'Re-sends the stored text of a `failed` first comment on a published post. Costs one post of quota when it succeeds.',
    tags: ['Posts'],
    scope: 'posts:write',
    params: idParams,
    idempotent: true,
    responses: { 200: { description: 'The post, first_comment.status posted', schema: data(PostSchema) } },
    errors: ['not_found', 'first_comment_not_found', 'first_comment_not_retryable', 'first_comment_failed', 'first_comment_rate_limited', 'usage_limit_exceeded'],
    handler: async ({ params, auth, deps }) => firstCommentAnswer(await retryFirstComment(postsRuntimeOf(deps), auth.userId, params.id)),
    resume: async ({ made, auth, deps }) => firstCommentAnswer(await answerMadeFirstComment(postsRuntimeOf(deps), auth.userId, made as MadeFirstComment)),
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
    handler: async ({ params, auth, deps }) => deletedPostAnswer(await deletePost(postsRuntimeOf(deps), auth.userId, params.id)),
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
      handler: async ({ params, auth, deps }) => ({ status: 200, body: { data: await setHidden(postsRuntimeOf(deps), auth.userId, params.id, action === 'hide') } }),
    }),
  ),
];
