import { z } from 'zod';
import { CommentSchema } from '../../src/comments/listing-view';
import { listComments, parseSince } from '../../src/comments/listing';
import { commentSyncStatuses } from '../../src/db/tables/comments';
import { acceptedInstantRange } from '../../src/db/timestamp';
import { defineRoute } from '../route';
import { idParams, queryBoolean, queryInteger } from '../validation';
import { postsRuntimeOf } from './posts';

/** `GET /api/v1/posts/:id/comments`: the stored comment snapshot of a post (publishing-api.md "Comments endpoints"). */

const listCommentsQuery = z.strictObject({
  limit: queryInteger({ min: 1, max: 100 }).optional().meta({ description: 'Page size, default 25, max 100' }),
  cursor: z.string().min(1, 'must not be empty').optional().meta({ description: 'meta.next_cursor of the previous page; opaque' }),
  since: z
    .string()
    .transform((value, ctx) => parseSince(value) ?? (ctx.addIssue({ code: 'custom', message: `must be an ISO 8601 date or date-time ${acceptedInstantRange}` }), z.NEVER))
    .optional()
    .meta({ description: 'Only comments posted after this time (ISO 8601; UTC when no offset)' }),
  sync: z.enum(['auto', 'true', 'false'], { error: 'must be one of auto, true, false' }).optional().meta({ description: 'Default auto (see the sync rules)' }),
  include_hidden: queryBoolean.optional().meta({ description: 'Default false' }),
  include_deleted: queryBoolean.optional().meta({ description: 'Default false' }),
  parent_id: z.string().min(1, 'must not be empty').max(255).optional().meta({ description: "Only replies to this comment: its platform_comment_id" }),
});

const timestamp = z.string().meta({ description: 'ISO 8601, UTC' });

const CommentListingSchema = z.object({
  data: z.array(CommentSchema),
  meta: z.object({
    next_cursor: z.string().nullable(),
    capabilities: z.object({ reply: z.boolean(), hide: z.boolean(), delete_own: z.boolean(), delete_any: z.boolean() }),
    sync: z.object({
      status: z.enum(commentSyncStatuses),
      synced_at: timestamp.nullable(),
      reason: z.string().nullable(),
      next_sync_after: timestamp.nullable(),
    }),
  }),
});

export const commentsRoutes = [
  defineRoute({
    method: 'get',
    path: '/posts/:id/comments',
    summary: "List a post's comments",
    description:
      'Newest first, from the stored snapshot; page with `meta.next_cursor` until it is null. `sync=auto` refreshes behind the answer once the platform window passed, `sync=true` waits (up to 10 s) for a refresh, `sync=false` never refreshes.',
    tags: ['Comments'],
    scope: 'posts:read',
    params: idParams,
    query: listCommentsQuery,
    responses: { 200: { description: 'A page of comments', schema: CommentListingSchema } },
    errors: ['not_found', 'platform_coming_soon', 'comments_unsupported', 'comment_read_budget_exceeded', 'comment_sync_rate_limited', 'comment_permission_required'],
    handler: async ({ params, query, auth, deps }) => ({ status: 200, body: await listComments(postsRuntimeOf(deps), auth.userId, params.id, query) }),
  }),
];
