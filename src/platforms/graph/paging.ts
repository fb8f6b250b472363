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
