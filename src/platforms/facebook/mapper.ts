import { z } from 'zod';
import type { AccountIdentity, PlatformComment } from '../types';

/** Herald ↔ Facebook Graph shapes (protocols.md section 5). */

export const DEFAULT_FACEBOOK_ORIGIN = 'https://graph.facebook.com/v25.0';

/** Feed ids are `<pageId>_<postId>`; publishing-api.md's URL shape is `https://www.facebook.com/<pageId>_<postId>`. */
export function feedPostId(pageId: string, id: string): string {
  return id.includes('_') ? id : `${pageId}_${id}`;
}

export function postUrl(pageId: string, id: string): string {
  return `https://www.facebook.com/${feedPostId(pageId, id)}`;
}

/** A comment's link: the post's URL with the comment named (Graph comment ids are `<postId>_<commentId>`). */
export function commentUrl(pageId: string, postId: string, commentId: string): string {
  return `${postUrl(pageId, postId)}?comment_id=${encodeURIComponent(commentId.split('_').pop()!)}`;
}

/** What `verify` reads of `GET /me` (the Page, for its own token). */
export const pageAnswer = z.object({ id: z.string().min(1), name: z.string().optional(), username: z.string().optional(), link: z.string().optional() });
type FacebookPage = z.output<typeof pageAnswer>;

export const PAGE_FIELDS = 'id,name,username,link';

export function identityOf(page: FacebookPage): AccountIdentity {
  return {
    platformAccountId: page.id,
    username: page.username ?? page.id,
    displayName: page.name ?? null,
    profileUrl: page.link ?? `https://www.facebook.com/${page.id}`,
    kind: 'page',
    settings: { pageId: page.id },
  };
}

export interface FacebookComment {
  id: string;
  message?: string;
  created_time: string;
  from?: { id: string; name?: string };
  like_count?: number;
  comment_count?: number;
  parent?: { id: string };
  is_hidden?: boolean;
}

export const COMMENT_FIELDS = 'id,message,from{id,name},created_time,like_count,comment_count,parent{id},is_hidden';

export function commentOf(c: FacebookComment, pageId: string): PlatformComment {
  // Graph omits `from` for people who have not allowed apps to see them; the comment is still theirs, not ours.
  const from = c.from ?? { id: '', name: 'Facebook user' };
  return {
    platformCommentId: c.id,
    platformParentId: c.parent?.id ?? null,
    author: { handle: from.name ?? from.id, displayName: from.name ?? '', platformId: from.id, avatarUrl: null },
    text: c.message ?? '',
    createdAt: new Date(c.created_time).toISOString(),
    likes: c.like_count ?? 0,
    replies: c.comment_count ?? 0,
    own: from.id === pageId,
  };
}

/** `configuration.placement` (feed default) and `configuration.link`, already validated by the core. */
export function placementOf(configuration: Record<string, unknown> | undefined): 'feed' | 'story' {
  return configuration?.placement === 'story' ? 'story' : 'feed';
}

export function linkOf(configuration: Record<string, unknown> | undefined): string | undefined {
  return typeof configuration?.link === 'string' ? configuration.link : undefined;
}
