import type { AccountInactiveReason } from '../accounts/lifecycle';
import type { Db } from '../db';
import type { Logger } from '../logger';
import type { MediaStore } from '../media/store';
import { removeCopiesOfCancelled } from './media-cleanup';
import { cancelScheduled } from './removals';

/**
 * `unlessMayBeLive`: none of `postIds` is cancelled when one of them has an attempt that never reported back (its
 * mark open, `cancelScheduled`): the user's DELETE, which must not say "cancelled" of a post that may be live.
 */
export type CancelTarget = { postIds?: readonly string[]; accountId?: string; reason: AccountInactiveReason | null; unlessMayBeLive?: boolean };

/**
 * Cancels scheduled posts (`cancelScheduled`: `deleted` with the reason, quota refunded) and removes the media
 * copies downloaded for them (they stayed for good). No workflow is told: each ends at its next read of the row
 * (`cancelPosts` wakes them). Returns the ids cancelled (none when repeated: idempotent). Structural deps, so the
 * posts runtime can use it without importing the workflow client.
 */
export async function cancelScheduledPosts(rt: { db: Db; mediaStore: MediaStore; logger: Logger }, target: CancelTarget): Promise<string[]> {
  const ids = await cancelScheduled(rt.db, target);
  await removeCopiesOfCancelled(rt, ids);
  return ids;
}
