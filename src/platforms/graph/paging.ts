import { PlatformFailure } from '../types';
import { platformNames } from './errors';

/** Graph cursor pages: `{ data, paging: { cursors: { before, after }, next? } }`; `next` is present only when more follow. */
export interface GraphPage<T> {
  data: T[];
  paging?: { cursors?: { before?: string; after?: string }; next?: string };
}

export function nextCursorOf(page: GraphPage<unknown>): string | null {
  return page.paging?.next && page.paging.cursors?.after ? page.paging.cursors.after : null;
}

/** Default comment page size asked of the platforms (publishing-api.md: comments page size default 25). */
export const COMMENT_PAGE_SIZE = 25;

/** How far back a lost create is looked for among the account's recent posts (at least: `since` reaches further). */
const LOOKUP_WINDOW_MS = 15 * 60 * 1000;

/**
 * Whether a post made at `created` may be the lost create: within `LOOKUP_WINDOW_MS` of the look, or back to `since`
 * (the earliest open call's start, `PublishRequest.earlierAttemptSince`, less `PUBLISHED_SINCE_MARGIN_MS` for the
 * two clocks) when that is earlier. A post rescheduled, or waiting for a renewal or a long retry, is looked for long
 * after its lost call: 15 minutes back from the look missed it and the post was sent a second time.
 */
export function withinLookupWindow(created: string | undefined, now: Date, since?: number): boolean {
  const at = created ? Date.parse(created) : NaN;
  return Number.isFinite(at) && at >= lookupWindowStart(now, since) && at - now.getTime() <= LOOKUP_WINDOW_MS;
}

/**
 * The earliest time (ms) a post of the lost create may carry (`withinLookupWindow`'s first bound): what a platform
 * that lists by time is asked for (x's `start_time`), so its listing covers every call still open.
 */
export function lookupWindowStart(now: Date, since?: number): number {
  return Math.min(now.getTime() - LOOKUP_WINDOW_MS, since === undefined ? Infinity : since - PUBLISHED_SINCE_MARGIN_MS);
}

/**
 * A lost create is looked for by its text. With none to compare (a story, a post or comment without text) every post
 * of the account in the window matches, one the user made by hand included, and adopting that one would leave
 * Herald's never sent. So such a lookup is inconclusive: the outcome stays unknown (`findPublished` throws it;
 * `lookedUp` keeps the lost answer). The one exception is a container known PUBLISHED (`onlyMediaSince`).
 */
export function inconclusiveLookup(platform: 'facebook' | 'instagram' | 'threads', what: 'post' | 'story' | 'comment' = 'post'): PlatformFailure {
  return new PlatformFailure(platform, 'unknown_outcome', `${platformNames[platform]} did not answer in time; the ${what} may have been published.`);
}

/**
 * How much earlier than the adapter's clock said publishing began a platform timestamp may read and still be that
 * publish: Graph timestamps are whole seconds, and the two clocks are not the same one. A wider margin can only make
 * more posts candidates (an unknown outcome), never leave Herald's out.
 */
const PUBLISHED_SINCE_MARGIN_MS = 60_000;

/**
 * The media a container known PUBLISHED became, among `items` (every post of the account of that kind made since its
 * publishing began, as listed): Herald's is one of them, so when exactly one is there it is Herald's. With several
 * (one the user made by hand in the same minutes) or none listed, which one is not known: null.
 */
export function onlyMediaSince(items: ReadonlyArray<{ id: string; timestamp?: string }>, since: number): string | null {
  const candidates = items.filter((m) => {
    const at = m.timestamp ? Date.parse(m.timestamp) : NaN;
    // An item without a readable time could be it: it counts as a candidate.
    return !Number.isFinite(at) || at >= since - PUBLISHED_SINCE_MARGIN_MS;
  });
  return candidates.length === 1 ? candidates[0].id : null;
}
