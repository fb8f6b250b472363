import type { AccountInactiveReason } from '../accounts/lifecycle';
import { cancelScheduledPosts, type CancelTarget } from './cancel-scheduled';
import type { PostsRuntime } from './runtime';
import { signalPost } from './workflow-client';

/** `cancelScheduledPosts`, then their workflows are woken so they end now. */
export async function cancelPosts(rt: Pick<PostsRuntime, 'db' | 'mediaStore' | 'temporal' | 'logger'>, target: CancelTarget): Promise<string[]> {
  const ids = await cancelScheduledPosts(rt, target);
  await Promise.all(ids.map((id) => signalPost(rt as PostsRuntime, id, 'cancel', target.reason)));
  return ids;
}

/**
 * The posts side of the accounts lifecycle (`src/accounts/lifecycle.ts`): an account switched off, disconnected or
 * whose credential the platform refuses has its scheduled posts cancelled with the matching reason, quota returned.
 * Idempotent.
 */
export function createPostsLifecycle(rt: Pick<PostsRuntime, 'db' | 'mediaStore' | 'temporal' | 'logger'>) {
  return {
    async accountDeactivated(accountId: string, reason: AccountInactiveReason): Promise<void> {
      await cancelPosts(rt, { accountId, reason });
    },
  };
}
