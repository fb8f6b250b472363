import type { AccountInactiveReason } from '../accounts/lifecycle';
import { cancelScheduled } from './repository';
import type { PostsRuntime } from './runtime';
import { signalPost } from './workflow-client';

/**
 * Cancels scheduled posts (`cancelScheduled`: `deleted` with the reason, quota refunded), then wakes their workflows
 * so they end now. Returns the ids cancelled (none when repeated: idempotent).
 */
export async function cancelPosts(
  rt: Pick<PostsRuntime, 'db' | 'temporal' | 'logger'>,
  target: { postIds?: readonly string[]; accountId?: string; reason: AccountInactiveReason | null },
): Promise<string[]> {
  const ids = await cancelScheduled(rt.db, target);
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
