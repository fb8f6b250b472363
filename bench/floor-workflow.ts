import { proxyLocalActivities } from '@temporalio/workflow';
// Only the activity's type: workflow code never loads activity code.
import type { FloorActivities } from './posts-floor';

/**
 * The smallest workflow-backed publish (`bench/posts-floor.ts`): one local activity that marks the attempt, calls
 * the platform and records the result. No retries, no signals, no history to keep.
 */
const { publishFloor } = proxyLocalActivities<FloorActivities>({ startToCloseTimeout: '1 minute' });

export async function floorPublish(postId: string, text: string): Promise<void> {
  await publishFloor(postId, text);
}
