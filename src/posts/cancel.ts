import { sql } from 'kysely';
import type { AccountInactiveReason } from '../accounts/lifecycle';
import { refundQuota } from '../quota/quota';
import type { PostsRuntime } from './runtime';
import { signalPost } from './workflow-client';

/**
 * Cancels scheduled posts: `deleted`, `error_message` = the reason (null when the user deleted it), every
 * reservation refunded, in one transaction; then their workflows are woken so they end now. Only `scheduled` rows
 * change: a post already publishing finishes (its outcome is recorded), so nothing live is ever marked deleted.
 * Returns the ids cancelled (none when repeated: idempotent).
 */
export async function cancelPosts(
  rt: Pick<PostsRuntime, 'db' | 'temporal' | 'logger'>,
  target: { postIds?: readonly string[]; accountId?: string; reason: AccountInactiveReason | null },
): Promise<string[]> {
  if (!target.postIds && !target.accountId) throw new Error('cancelPosts needs postIds or accountId');
  const ids = await rt.db.transaction().execute(async (trx) => {
    let update = trx
      .updateTable('posts')
      .set({ status: 'deleted', error_message: target.reason, updated_at: sql`now()` })
      .where('status', '=', 'scheduled');
    if (target.postIds) update = update.where('id', 'in', target.postIds.length ? target.postIds : ['00000000-0000-0000-0000-000000000000']);
    if (target.accountId) update = update.where('account_id', '=', target.accountId);
    const rows = await update.returning('id').execute();
    const cancelled = rows.map((r) => r.id);
    await refundQuota(trx, cancelled);
    return cancelled;
  });
  await Promise.all(ids.map((id) => signalPost(rt as PostsRuntime, id, 'cancel', target.reason)));
  return ids;
}

/**
 * The posts side of the accounts lifecycle (`src/accounts/lifecycle.ts`): an account switched off, disconnected or
 * whose credential the platform refuses has its scheduled posts cancelled with the matching reason, quota returned.
 * Idempotent.
 */
export function createPostsLifecycle(rt: Pick<PostsRuntime, 'db' | 'temporal' | 'logger'>) {
  return {
    async accountDeactivated(accountId: string, reason: AccountInactiveReason): Promise<void> {
      await cancelPosts(rt, { accountId, reason });
    },
  };
}
