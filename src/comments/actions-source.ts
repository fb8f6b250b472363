import { sql } from 'kysely';
import type { Db } from '../db';
import type { AccountRow } from '../db/tables/accounts';
import type { PostRow } from '../db/tables/posts';
import { isUuid } from '../db/uuid';
import { isOwnLivePost } from '../posts/view-queries';

/**
 * What a comment action (reply, hide, delete) reads before its comment, in one statement as a listing does
 * (`listing-source.ts`): the user's post and its account, which used to be two round trips in a row.
 */

/** Every column of an account row (a column added to the table fails to compile here until it is listed). */
const accountColumnSet: Record<keyof AccountRow, true> = {
  id: true, user_id: true, platform: true, platform_account_id: true, username: true, display_name: true, profile_url: true,
  via: true, kind: true, own_credentials: true, premium: true, active: true, inactive_reason: true, timezone: true,
  credentials_sealed: true, settings: true, credential_expires_at: true, credential_issued_at: true, credential_refused_at: true, created_at: true, updated_at: true,
};
const accountColumns = Object.keys(accountColumnSet) as Array<keyof AccountRow>;
// The post's and the account's columns share names (id, user_id, platform...): the account's come back prefixed.
const accountPrefix = 'account__';

/**
 * The user's post and its account (absent when the post has none, or it is not the user's), or undefined when the
 * post is absent, another user's, a promoted draft, or the id is not a UUID.
 */
export async function loadCommentablePostRows(db: Db, userId: string, postId: string): Promise<{ post: PostRow; account: AccountRow | undefined } | undefined> {
  if (!isUuid(postId)) return undefined;
  const row = await db
    .selectFrom('posts')
    .leftJoin('accounts', (join) => join.onRef('accounts.id', '=', 'posts.account_id').on('accounts.user_id', '=', userId))
    .selectAll('posts')
    .select(accountColumns.map((column) => sql.ref(`accounts.${column}`).as(`${accountPrefix}${column}`)))
    .where(isOwnLivePost(postId, userId))
    .executeTakeFirst();
  if (!row) return undefined;
  const post: Record<string, unknown> = {};
  const account: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) {
    if (key.startsWith(accountPrefix)) account[key.slice(accountPrefix.length)] = value;
    else post[key] = value;
  }
  // The joined columns are null exactly when the join found no row: the id says so.
  return { post: post as unknown as PostRow, account: account.id === null ? undefined : (account as unknown as AccountRow) };
}
