import type { Db } from '../db';
import type { PostRow } from '../db/tables/posts';
import { ApiError } from '../errors';
import { toPostView, type PostView } from './post-view';

/** Posts with their account's state, mapped once by `toPostView`; in the order of `ids`. */
export async function loadPostViews(db: Db, ids: readonly string[]): Promise<PostView[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('posts')
    .leftJoin('accounts', 'accounts.id', 'posts.account_id')
    .selectAll('posts')
    .select('accounts.inactive_reason as account_inactive_reason')
    .where('posts.id', 'in', ids)
    .execute();
  const byId = new Map(
    rows.map(({ account_inactive_reason, ...row }) => [
      row.id,
      toPostView(row, row.account_id === null ? null : { inactive_reason: account_inactive_reason ?? null }),
    ]),
  );
  return ids.map((id) => byId.get(id)).filter((view): view is PostView => view !== undefined);
}

/** The user's post row, or 404 `not_found` (absent, another user's, or not a UUID). */
export async function findOwnPost(db: Db, userId: string, postId: string): Promise<PostRow> {
  const row = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(postId)
    ? await db.selectFrom('posts').selectAll().where('id', '=', postId).where('user_id', '=', userId).executeTakeFirst()
    : undefined;
  if (!row) throw new ApiError('not_found', `Post ${postId} was not found`);
  return row;
}

export async function getPostView(db: Db, postId: string): Promise<PostView> {
  const [view] = await loadPostViews(db, [postId]);
  if (!view) throw new ApiError('not_found', `Post ${postId} was not found`);
  return view;
}
