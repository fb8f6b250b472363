import { Context } from '@temporalio/activity';
import { refreshIfDue, type CommentSyncDeps, type RefreshResult } from '../src/comments/sync';
import type { RefreshMode } from '../src/comments/sync-windows';

/**
 * The activity of `workflows/sync-comments.ts`: one refresh of a post's comments if one is due (the sync state
 * decides), reaching the platform at most once per page. `now` is workflow time, so windows follow time skipping.
 */
export function createCommentSyncActivities(deps: CommentSyncDeps) {
  return {
    async refreshCommentsIfDue(input: { postId: string; mode: RefreshMode; now: number }): Promise<RefreshResult> {
      // A heartbeat per page: a refresh stuck on one page is given up on after the workflow's heartbeat timeout, and one
      // Temporal gave up on stops at its next page instead of reading on beside the next refresh.
      return refreshIfDue(deps, input, {
        onPage: () => {
          const ctx = Context.current();
          ctx.heartbeat();
          // The refresh records what it read as stopped part-way (its time ran out), whatever this throws.
          if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason ?? new Error('the comment refresh was given up on');
        },
      });
    },
  };
}

export type CommentSyncActivities = ReturnType<typeof createCommentSyncActivities>;
