import { z } from 'zod';
import { deleteComment, setCommentHidden, type CommentActionsRuntime } from '../../src/comments/actions';
import { replyToComment } from '../../src/comments/actions-reply';
import { CommentSchema } from '../../src/comments/listing-view';
import type { ErrorCode } from '../../src/errors';
import { createPostsLifecycle } from '../../src/posts/cancel';
import type { AppDeps } from '../deps';
import { defineRoute } from '../route';
import { pathId } from '../validation';
import { postsRuntimeOf } from './posts';

/** Reply to, hide and delete a comment of a published post (publishing-api.md "Comments endpoints"). */

const runtimes = new WeakMap<AppDeps, CommentActionsRuntime>();

function runtimeOf(deps: AppDeps): CommentActionsRuntime {
  let rt = runtimes.get(deps);
  if (!rt) {
    const posts = postsRuntimeOf(deps);
    rt = { ...posts, lifecycle: deps.accountLifecycle ?? createPostsLifecycle(posts) };
    runtimes.set(deps, rt);
  }
  return rt;
}

const params = z.strictObject({ id: pathId, comment_id: pathId });
const data = <T extends z.ZodType>(schema: T) => z.object({ data: schema });

/** What every comment action may answer besides the errors every route may. */
const actionErrors: ErrorCode[] = [
  'not_found',
  'platform_coming_soon',
  'comments_unsupported',
  'comment_action_unsupported',
  'comment_permission_required',
  'upstream_error',
];

export const commentActionRoutes = [
  defineRoute({
    method: 'post',
    path: '/posts/:id/comments/:comment_id/reply',
    summary: 'Reply to a comment',
    description:
      'Publishes the reply as a post from the post\'s account: one post of monthly quota; an x reply with a link carries the x link-post charge (refused on Free). The reply is stored at once with `own: true`; the answered comment shows `replied: true`.',
    tags: ['Comments'],
    scope: 'posts:write',
    params,
    // No body, no `text` and `text: null` are all "no text": 400 validation_error from the reply's own check (the
    // contract's code for it), not the schema's bad_request.
    body: z.strictObject({ text: z.string().nullish() }).optional(),
    documentedBody: z.strictObject({ text: z.string().meta({ description: 'The same per-platform character limit as a post; missing or over it is 400 validation_error' }) }),
    idempotent: true,
    responses: { 201: { description: 'The reply, in the comment shape', schema: data(CommentSchema) } },
    errors: [...actionErrors, 'validation_error', 'x_link_posts_require_paid_plan', 'usage_limit_exceeded'],
    handler: async ({ params, body, auth, deps, req }) => ({
      status: 201,
      body: { data: await replyToComment(runtimeOf(deps), auth.userId, params.id, params.comment_id, body?.text ?? undefined, { idempotencyKey: req.get('Idempotency-Key') }) },
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/posts/:id/comments/:comment_id/hide',
    summary: 'Hide or show a comment',
    description: 'facebook, instagram and threads only. `hidden: true` hides the comment on the platform, `false` shows it again. Costs nothing.',
    tags: ['Comments'],
    scope: 'posts:write',
    params,
    body: z.strictObject({ hidden: z.boolean() }),
    responses: { 200: { description: 'The whole comment, `hidden` as requested', schema: data(CommentSchema) } },
    errors: actionErrors,
    handler: async ({ params, body, auth, deps }) => ({
      status: 200,
      body: { data: await setCommentHidden(runtimeOf(deps), auth.userId, params.id, params.comment_id, body.hidden) },
    }),
  }),
  defineRoute({
    method: 'delete',
    path: '/posts/:id/comments/:comment_id',
    summary: 'Delete a comment',
    description:
      'Any comment on facebook and instagram; elsewhere only your own replies. Kept with `deleted: true` (listed with include_deleted=true); replies go with it on facebook, instagram, threads and linkedin. Deleting again answers the same. Costs nothing.',
    tags: ['Comments'],
    scope: 'posts:write',
    params,
    responses: { 200: { description: 'Deleted', schema: data(z.object({ id: z.string(), deleted: z.literal(true) })) } },
    errors: actionErrors,
    handler: async ({ params, auth, deps }) => ({
      status: 200,
      body: { data: await deleteComment(runtimeOf(deps), auth.userId, params.id, params.comment_id) },
    }),
  }),
];
