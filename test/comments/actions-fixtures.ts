/**
 * Comment action test fixtures, on top of the posts harness (`test/posts/harness.ts`):
 *
 *   commentsConfig()                        the test config with every platform's comments open (no coming-soon flags)
 *   connectAccount(h, body)                 POST /api/v1/accounts for the harness user → the account object
 *   publish(h, accountId, text, extra?)     POST /api/v1/posts, asserted published → the post object
 *   snapshot(h, postId)                     reads the post's comments from its platform through the real adapter and
 *                                           stores them as a refresh does (`upsertRefreshedComments`) → every stored row
 *   comment(h, postId, text)                the stored row with that text
 *   insertPublishedPost(db, userId, account, platformPostId, text?)
 *                                           a published post row written directly (a platform post the stand-in holds,
 *                                           or one never read) → its id
 */
import assert from 'node:assert/strict';
import { loadPlatformContext } from '../../src/accounts/platform-context';
import { upsertRefreshedComments } from '../../src/comments/sync-repository';
import type { Db } from '../../src/db';
import type { CommentRow } from '../../src/db/tables/comments';
import type { PlatformSlug } from '../../src/platforms/types';
import { testConfig } from '../helpers/api';
import { testSealedBox } from '../posts/fixtures';
import type { PostsHarness } from '../posts/harness';

export function commentsConfig() {
  return testConfig({ HERALD_COMING_SOON: 'tiktok,youtube,pinterest,google_business' });
}

export async function connectAccount(h: PostsHarness, body: Record<string, unknown>): Promise<{ id: string; [key: string]: unknown }> {
  const res = await h.api.request('POST', '/api/v1/accounts', { body });
  assert.ok(res.status === 201 || res.status === 200, res.text);
  return res.body.data;
}

export async function publish(h: PostsHarness, accountId: string, text: string, extra: Record<string, unknown> = {}, key?: string) {
  const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: accountId, text, ...extra }, ...(key ? { key } : {}) });
  assert.equal(res.status, 201, res.text);
  assert.equal(res.body.data.status, 'published', res.text);
  return res.body.data as { id: string; platform_post_id: string; first_comment: { comment_id: string | null; status: string } | null };
}

export async function snapshot(h: PostsHarness, postId: string): Promise<CommentRow[]> {
  const post = await h.db.selectFrom('posts').selectAll().where('id', '=', postId).executeTakeFirstOrThrow();
  const { ctx } = await loadPlatformContext(h.db, testSealedBox, post.account_id!);
  const adapter = h.standIns.adapters[post.platform];
  let cursor: string | undefined;
  do {
    const page = await adapter.listComments!(ctx, post.platform_post_id!, cursor);
    await upsertRefreshedComments(h.db, post, page.comments.map((c) => ({ ...c, createdAt: new Date(c.createdAt) })), new Date());
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return h.db.selectFrom('comments').selectAll().where('post_id', '=', post.id).execute();
}

export async function comment(h: PostsHarness, postId: string, text: string): Promise<CommentRow> {
  const rows = await h.db.selectFrom('comments').selectAll().where('post_id', '=', postId).where('text', '=', text).execute();
  assert.equal(rows.length, 1, `one stored comment "${text}"`);
  return rows[0];
}

export async function insertPublishedPost(db: Db, userId: string, account: { id: string; platform: PlatformSlug }, platformPostId: string, text = 'published'): Promise<{ id: string }> {
  return db
    .insertInto('posts')
    .values({ user_id: userId, account_id: account.id, platform: account.platform, text, status: 'published', platform_post_id: platformPostId, published_at: new Date() })
    .returning('id')
    .executeTakeFirstOrThrow();
}
