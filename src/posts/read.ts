import type { Db } from '../db';
import type { PostRow } from '../db/tables/posts';
import { ApiError } from '../errors';
import type { PostView } from './post-view';
import * as posts from './repository';

/** The user's post row, or 404 `not_found` (absent, another user's, or not a UUID). */
export async function findOwnPost(db: Db, userId: string, postId: string): Promise<PostRow> {
  const row = await posts.findOwnPost(db, userId, postId);
  if (!row) throw new ApiError('not_found', `Post ${postId} was not found`);
  return row;
}

export async function getPostView(db: Db, postId: string): Promise<PostView> {
  const [view] = await posts.loadPostViews(db, [postId]);
  if (!view) throw new ApiError('not_found', `Post ${postId} was not found`);
  return view;
}
