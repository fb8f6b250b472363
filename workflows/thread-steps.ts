import { proxyActivities, proxyLocalActivities, type ActivityOptions, type LocalActivityOptions } from '@temporalio/workflow';
// Only the activity types: workflow code never loads activity code.
import type { PostActivities } from '../activities/posts';
import type { ThreadActivities } from '../activities/threads';
import type { HeldThreadActivities } from '../activities/threads-held';

/**
 * The activities `publishThread` calls, with their timeouts and retries: through the task queue (`queued`), or, for
 * an immediate thread, in the worker that holds the workflow (`local`, as a post's steps are: `post-steps.ts`).
 */

// Reaches a platform: never retried by Temporal (the adapters make one create safe; the workflow owns retries). A part
// run again as a local activity (its workflow task lost) finds its mark and asks the platform first (`sendPart`).
const platformCallOptions = { startToCloseTimeout: '10 minutes', retry: { maximumAttempts: 1 } } satisfies ActivityOptions & LocalActivityOptions;
// Deleting a post is idempotent (a post already gone counts as removed), so a crashed compensation may run again.
const compensationOptions = {
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 3 },
} satisfies ActivityOptions & LocalActivityOptions;
// Database bookkeeping: every write is conditional on the status it expects, so repeating one is harmless.
const bookkeepingOptions = {
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 20 },
} satisfies ActivityOptions & LocalActivityOptions;

type AllThreadActivities = ThreadActivities & HeldThreadActivities & Pick<PostActivities, 'publishFirstComment'>;

/** The activities a run calls, through the task queue or, for an immediate thread, in the worker (`immediate`). */
export interface Steps {
  platformCall: AllThreadActivities;
  compensation: AllThreadActivities;
  bookkeeping: AllThreadActivities;
}

export const queued: Steps = {
  platformCall: proxyActivities<AllThreadActivities>(platformCallOptions),
  compensation: proxyActivities<AllThreadActivities>(compensationOptions),
  bookkeeping: proxyActivities<AllThreadActivities>(bookkeepingOptions),
};

export const local: Steps = {
  platformCall: proxyLocalActivities<AllThreadActivities>(platformCallOptions),
  compensation: proxyLocalActivities<AllThreadActivities>(compensationOptions),
  bookkeeping: proxyLocalActivities<AllThreadActivities>(bookkeepingOptions),
};
