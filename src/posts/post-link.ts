import type { PostRow } from '../db/tables/posts';
import type { PostLink } from '../platforms/types';

/**
 * A published post's link as its row keeps it: `platform_post_url`, and `platform_post_url_unread` when the link
 * could not be read at publish time (migration 0200; a later GET asks once more, `getPost`).
 */

/** What `platform_post_url_unread` stores for a link: set only where there is no link to store. */
export function urlUnreadOf(link: PostLink): boolean {
  return link.url === null && link.urlUnread === true;
}

/** A stored row's link as its publish answer gave it (a thread part sent and stored earlier). */
export function storedLinkOf(row: Pick<PostRow, 'platform_post_url' | 'platform_post_url_unread'>): PostLink {
  return { url: row.platform_post_url, urlUnread: row.platform_post_url_unread };
}
