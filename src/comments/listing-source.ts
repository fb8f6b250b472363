import type { Db } from '../db';
import type { AccountRow } from '../db/tables/accounts';
import type { CommentSyncStateRow } from '../db/tables/comments';
import type { PostRow } from '../db/tables/posts';
import type { User } from '../db/tables/users';
import { isUuid } from '../db/uuid';
import { isOwnLivePost } from '../posts/view-queries';

/**
 * What a comment listing needs before its page, in one statement (issue 10): the user's post, its account with the
 * account owner's plan, and the post's sync state. A listing is a hot path, and these were four round trips in a row.
 */

type ListingAccount = Pick<AccountRow, 'kind' | 'own_credentials'> &
  Pick<User, 'plan' | 'post_quota' | 'scheduled_quota' | 'account_limit' | 'comment_sync_quota' | 'x_comment_read_quota'>;

interface ListingSource {
  post: PostRow;
  /** Absent when the post has no account (or it is gone). */
  account?: ListingAccount;
  /** Absent until the post is first listed or synced. */
  syncState?: CommentSyncStateRow;
}

/** The user's post with its account, plan and sync state, or undefined (absent, another user's, not a UUID, or a promoted draft). */
export async function loadListingSource(db: Db, userId: string, postId: string): Promise<ListingSource | undefined> {
  if (!isUuid(postId)) return undefined;
  const row = await db
    .selectFrom('posts')
    .leftJoin('accounts', 'accounts.id', 'posts.account_id')
    .leftJoin('users', 'users.id', 'accounts.user_id')
    .leftJoin('comment_sync_states', 'comment_sync_states.post_id', 'posts.id')
    .selectAll('posts')
    .select([
      'accounts.id as account__id',
      'accounts.kind as account__kind',
      'accounts.own_credentials as account__own_credentials',
      'users.plan as account__plan',
      'users.post_quota as account__post_quota',
      'users.scheduled_quota as account__scheduled_quota',
      'users.account_limit as account__account_limit',
      'users.comment_sync_quota as account__comment_sync_quota',
      'users.x_comment_read_quota as account__x_comment_read_quota',
      'comment_sync_states.post_id as sync__post_id',
      'comment_sync_states.status as sync__status',
      'comment_sync_states.synced_at as sync__synced_at',
      'comment_sync_states.reason as sync__reason',
      'comment_sync_states.next_sync_after as sync__next_sync_after',
      'comment_sync_states.consecutive_failures as sync__consecutive_failures',
      'comment_sync_states.last_listed_at as sync__last_listed_at',
      'comment_sync_states.created_at as sync__created_at',
      'comment_sync_states.updated_at as sync__updated_at',
    ])
    .where(isOwnLivePost(postId, userId))
    .executeTakeFirst();
  if (!row) return undefined;
  const {
    account__id, account__kind, account__own_credentials, account__plan, account__post_quota, account__scheduled_quota,
    account__account_limit, account__comment_sync_quota, account__x_comment_read_quota,
    sync__post_id, sync__status, sync__synced_at, sync__reason, sync__next_sync_after, sync__consecutive_failures,
    sync__last_listed_at, sync__created_at, sync__updated_at,
    ...post
  } = row;
  return {
    post,
    // The joined columns are null exactly when the join found no row: the ids say so, the rest follow.
    account:
      account__id === null
        ? undefined
        : {
            kind: account__kind, own_credentials: account__own_credentials!, plan: account__plan!, post_quota: account__post_quota,
            scheduled_quota: account__scheduled_quota, account_limit: account__account_limit,
            comment_sync_quota: account__comment_sync_quota, x_comment_read_quota: account__x_comment_read_quota,
          },
    syncState:
      sync__post_id === null
        ? undefined
        : {
            post_id: sync__post_id, status: sync__status!, synced_at: sync__synced_at, reason: sync__reason,
            next_sync_after: sync__next_sync_after, consecutive_failures: sync__consecutive_failures!,
            last_listed_at: sync__last_listed_at, created_at: sync__created_at!, updated_at: sync__updated_at!,
          },
  };
}
