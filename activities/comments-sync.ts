import { refreshIfDue, type CommentSyncDeps, type RefreshResult } from '../src/comments/sync';
import type { RefreshMode } from '../src/comments/sync-windows';

/**
 * The activity of `workflows/sync-comments.ts`: one refresh of a post's comments if one is due (the sync state
 * decides), reaching the platform at most once per page. `now` is workflow time, so windows follow time skipping.
 */
export function createCommentSyncActivities(deps: CommentSyncDeps) {
  return {
    async refreshCommentsIfDue(input: { postId: string; mode: RefreshMode; now: number }): Promise<RefreshResult> {
      return refreshIfDue(deps, input);
    },
  };
}

export type CommentSyncActivities = ReturnType<typeof createCommentSyncActivities>;
