import type { CommentSyncStateRow } from '../db/tables/comments';
import { capabilities } from '../platforms/capabilities';
import type { PlatformSlug } from '../platforms/types';

/**
 * When a post's comments may be refreshed (publishing-api.md sync rules 2-4, decisions.md "Comments"). Pure
 * functions of the stored sync state, shared by the listing (whether to ask for a refresh) and the sync activity
 * (whether to run it), so both read the same rule.
 */

/** `auto`: a listing's default; `true`: a listing that waits; `background`: the workflow's own timer. */
export type RefreshMode = 'auto' | 'true' | 'background';

/** Background refreshes run only while the post is being read: listed within this long. */
export const READ_RECENTLY_MS = 30 * 60_000;
/** Failed refreshes wait longer each time, up to this. */
export const MAX_BACKOFF_MS = 60 * 60_000;

type SyncTiming = Pick<CommentSyncStateRow, 'synced_at' | 'next_sync_after'>;

export function windowMs(platform: PlatformSlug, mode: RefreshMode): number {
  const [auto, onDemand] = capabilities[platform].syncWindowSeconds;
  return (mode === 'true' ? onDemand : auto) * 1000;
}

/** The earliest moment a refresh of `mode` runs; null = at once (never synced). */
export function dueAt(platform: PlatformSlug, state: SyncTiming | undefined, mode: RefreshMode): number | null {
  if (!state) return null;
  const gates = [state.next_sync_after?.getTime() ?? -Infinity];
  if (mode !== 'true' && state.synced_at) gates.push(state.synced_at.getTime() + windowMs(platform, mode));
  const at = Math.max(...gates);
  return at === -Infinity ? null : at;
}

export function isDue(platform: PlatformSlug, state: SyncTiming | undefined, mode: RefreshMode, now: Date): boolean {
  const at = dueAt(platform, state, mode);
  return at === null || at <= now.getTime();
}

/**
 * Sync rule 3: after the `failures`-th consecutive failure, the wait before the next refresh: the platform's own
 * Retry-After when it names one, otherwise the `auto` window doubled per failure (one window after the first), at
 * most an hour.
 */
export function backoffMs(platform: PlatformSlug, failures: number, retryAfterSeconds: number | null): number {
  if (retryAfterSeconds !== null && retryAfterSeconds > 0) return retryAfterSeconds * 1000;
  return Math.min(MAX_BACKOFF_MS, windowMs(platform, 'auto') * 2 ** Math.max(0, failures - 1));
}

export function readRecently(lastListedAt: Date | null, now: Date): boolean {
  return lastListedAt !== null && now.getTime() - lastListedAt.getTime() < READ_RECENTLY_MS;
}
