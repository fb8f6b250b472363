import { z } from 'zod';
import type { Db } from '../../src/db';
import { postStatuses } from '../../src/db/tables/posts';
import { PostSchema, toPostView } from '../../src/posts/post-view';
import { defineRoute } from '../route';
import { queryBoolean, queryInteger } from '../validation';

export const listPostsQuery = z.strictObject({
  limit: queryInteger({ min: 1, max: 100 }).optional().meta({ description: 'Page size, default 20, max 100' }),
  offset: queryInteger({ min: 0 }).optional().meta({ description: 'Default 0' }),
  status: z.enum(postStatuses, { error: `must be one of ${postStatuses.join(', ')}` }).optional(),
  account_id: z.guid({ error: 'must be a UUID' }).optional(),
  group_id: z.guid({ error: 'must be a UUID' }).optional(),
  include_hidden: queryBoolean.optional().meta({ description: 'Default false' }),
});

export type ListPostsFilter = z.output<typeof listPostsQuery>;

/**
 * The user's posts, newest first (publishing-api.md "GET /api/v1/posts"). Drafts are left out unless
 * `status=draft` or `group_id` is given; hidden posts unless `include_hidden=true`; a promoted draft is gone.
 */
export async function listPosts(db: Db, userId: string, filter: ListPostsFilter) {
  let query = db
    .selectFrom('posts')
    .leftJoin('accounts', 'accounts.id', 'posts.account_id')
    .selectAll('posts')
    .select('accounts.inactive_reason as account_inactive_reason')
    .where('posts.user_id', '=', userId)
    .where('posts.promoted_to_id', 'is', null);
  if (filter.status !== undefined) query = query.where('posts.status', '=', filter.status);
  else if (filter.group_id === undefined) query = query.where('posts.status', '!=', 'draft');
  if (filter.account_id !== undefined) query = query.where('posts.account_id', '=', filter.account_id);
  if (filter.group_id !== undefined) query = query.where('posts.group_id', '=', filter.group_id);
  if (filter.include_hidden !== true) query = query.where('posts.hidden', '=', false);
  const rows = await query
    .orderBy('posts.created_at', 'desc')
    .orderBy('posts.thread_id')
    .orderBy('posts.thread_order')
    .orderBy('posts.id', 'desc')
    .limit(filter.limit ?? 20)
    .offset(filter.offset ?? 0)
    .execute();
  return rows.map(({ account_inactive_reason, ...row }) =>
    toPostView(row, row.account_id === null ? null : { inactive_reason: account_inactive_reason ?? null }),
  );
}

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
    handler: async ({ query, auth, deps }) => ({ status: 200, body: { data: await listPosts(deps.db, auth.userId, query) } }),
  }),
];
