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

/** How far back a lost create is looked for among the account's recent posts. */
export const LOOKUP_WINDOW_MS = 15 * 60 * 1000;

export function withinLookupWindow(created: string | undefined, now: Date): boolean {
  const at = created ? Date.parse(created) : NaN;
  return Number.isFinite(at) && now.getTime() - at <= LOOKUP_WINDOW_MS && at - now.getTime() <= LOOKUP_WINDOW_MS;
}

/**
 * A lost create is looked for by its text. With none to compare (a story, a post or comment without text) every post
 * of the account in the window matches, one the user made by hand included, and adopting that one would leave
 * Herald's never sent. Nothing Herald keeps ties a post to its attempt (no container id is recorded), so such a lookup
 * is inconclusive: the outcome stays unknown (`findPublished` throws it; `lookedUp` keeps the lost answer).
 */
export function inconclusiveLookup(platform: 'facebook' | 'instagram' | 'threads', what: 'post' | 'story' | 'comment' = 'post'): PlatformFailure {
  return new PlatformFailure(platform, 'unknown_outcome', `${platformNames[platform]} did not answer in time; the ${what} may have been published.`);
}
