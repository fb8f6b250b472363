import { z } from 'zod';
import { postStatuses } from '../../src/db/tables/posts';
import { PostSchema } from '../../src/posts/post-view';
import { listPostViews } from '../../src/posts/view-queries';
import { defineRoute } from '../route';
import { queryBoolean, queryInteger } from '../validation';

const listPostsQuery = z.strictObject({
  limit: queryInteger({ min: 1, max: 100 }).optional().meta({ description: 'Page size, default 20, max 100' }),
  offset: queryInteger({ min: 0 }).optional().meta({ description: 'Default 0' }),
  status: z.enum(postStatuses, { error: `must be one of ${postStatuses.join(', ')}` }).optional(),
  account_id: z.guid({ error: 'must be a UUID' }).optional(),
  group_id: z.guid({ error: 'must be a UUID' }).optional(),
  include_hidden: queryBoolean.optional().meta({ description: 'Default false' }),
});

export const postsListRoutes = [
  defineRoute({
    method: 'get',
    path: '/posts',
    summary: 'List posts',
    description:
      'Newest first. No total and no cursor: stop when a page is shorter than `limit`. Drafts are left out unless `status=draft` or `group_id` is given; hidden posts unless `include_hidden=true`.',
    tags: ['Posts'],
    scope: 'posts:read',
    query: listPostsQuery,
    responses: { 200: { description: 'A page of posts', schema: z.object({ data: z.array(PostSchema) }) } },
    handler: async ({ query, auth, deps }) => ({ status: 200, body: { data: await listPostViews(deps.db, auth.userId, query) } }),
  }),
];
