import type { Db } from '../db';
import type { PostRow } from '../db/tables/posts';
import { ApiError } from '../errors';
import type { PostView } from './post-view';
import * as postQueries from './view-queries';

/** The user's post row, or 404 `not_found` (absent, another user's, or not a UUID). */
export async function findOwnPost(db: Db, userId: string, postId: string): Promise<postQueries.OwnPostRow> {
  const row = await postQueries.findOwnPost(db, userId, postId);
  if (!row) throw postNotFound(postId);
  return row;
}

/** The user's post row as `GET /posts/:id` finds it, or 404 `not_found` as `findOwnPost` (a promoted draft too: it is gone). */
export async function findOwnLivePost(db: Db, userId: string, postId: string): Promise<PostRow> {
  const row = await postQueries.findOwnLivePost(db, userId, postId);
  if (!row) throw postNotFound(postId);
  return row;
}

/** The user's post row and its view, read in one statement, or 404 `not_found` as `findOwnPost` (a promoted draft too: it is gone). */
export async function findOwnPostView(db: Db, userId: string, postId: string): Promise<{ row: PostRow; view: PostView }> {
  const found = await postQueries.findOwnPostView(db, userId, postId);
  if (!found) throw postNotFound(postId);
  return found;
}

export async function getPostView(db: Db, postId: string): Promise<PostView> {
  const [view] = await postQueries.loadPostViews(db, [postId]);
  if (!view) throw postNotFound(postId);
  return view;
}

/** 404 `not_found` for a post the user cannot see: absent, another user's, or not a UUID alike. */
export function postNotFound(postId: string): ApiError {
  return new ApiError('not_found', `Post ${postId} was not found`);
}
