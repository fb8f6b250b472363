import type { PlatformFailure } from './types';

/**
 * A read made to settle a create whose answer was lost (a container's status, a search of the account's recent posts)
 * never classifies. Whatever it throws says nothing about the post the create may have made: a transient fault
 * ("nothing was changed") would let the create be sent again, a permission refusal ("reconnect") would drop the
 * account and cancel its scheduled posts. So the create's own `unknown_outcome` stands (README "No duplicate posts").
 */
export function lookedUp<T>(lost: PlatformFailure, lookup: () => Promise<T>): Promise<T> {
  return lookup().catch(() => {
    throw lost;
  });
}
