import type { PostRow } from '../db/tables/posts';
import type { PostLink } from '../platforms/types';

/**
 * A published post's link as its row keeps it: `platform_post_url`, and `platform_post_url_unread` when the link
 * could not be read at publish time (migration 0210; a later GET asks once more, `getPost`).
 */

/** What `platform_post_url_unread` stores for a link: set only where there is no link to store. */
export function urlUnreadOf(link: PostLink): boolean {
  return link.url === null && link.urlUnread === true;
}

/** A link as a publish answer gives it, `urlUnread` only when set (a part answered from its row equals the one sent). */
export function linkOf(link: PostLink): PostLink {
  return urlUnreadOf(link) ? { url: null, urlUnread: true } : { url: link.url };
}

/** A stored row's link as its publish answer gave it (a thread part sent and stored earlier). */
export function storedLinkOf(row: Pick<PostRow, 'platform_post_url' | 'platform_post_url_unread'>): PostLink {
  return linkOf({ url: row.platform_post_url, urlUnread: row.platform_post_url_unread });
}
