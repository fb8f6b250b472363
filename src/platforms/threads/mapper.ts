import { z } from 'zod';
import { capabilities } from '../capabilities';
import { PlatformFailure, type AccountIdentity, type MediaItem, type PlatformComment } from '../types';

/** Herald ↔ Threads API shapes (protocols.md section 7). */

export const DEFAULT_THREADS_ORIGIN = 'https://graph.threads.net/v1.0';

/** What `verify` reads of `GET /me`. */
export const userAnswer = z.object({ id: z.string().min(1), username: z.string().optional(), name: z.string().optional() });
type ThreadsUser = z.output<typeof userAnswer>;

export const USER_FIELDS = 'id,username,name,threads_profile_picture_url';

export function identityOf(user: ThreadsUser): AccountIdentity {
  const username = user.username ?? user.id;
  return {
    platformAccountId: user.id,
    username,
    displayName: user.name ?? null,
    profileUrl: `https://www.threads.com/@${username}`,
    kind: null,
    settings: { threadsUserId: user.id, username },
  };
}

function publicUrlOf(item: MediaItem): string {
  if (!item.publicUrl) throw new PlatformFailure('threads', 'permanent', 'Threads refused the post: Threads fetches media from a public URL and none was available.');
  return item.publicUrl;
}

/** One media item as container fields; alt text only where the capability table says it is sent (not Threads). */
function mediaFields(item: MediaItem): Record<string, string | undefined> {
  const alt = capabilities.threads.altText ? item.alt : undefined;
  return item.kind === 'video' ? { media_type: 'VIDEO', video_url: publicUrlOf(item) } : { media_type: 'IMAGE', image_url: publicUrlOf(item), alt_text: alt };
}

export function singleFields(text: string, media: MediaItem | undefined, replyToId: string | undefined): Record<string, string | undefined> {
  const base = media ? mediaFields(media) : { media_type: 'TEXT' };
  return { ...base, text: text || undefined, reply_to_id: replyToId };
}

export function carouselItemFields(item: MediaItem): Record<string, string | undefined> {
  return { ...mediaFields(item), is_carousel_item: 'true' };
}

export function carouselFields(childIds: string[], text: string, replyToId: string | undefined): Record<string, string | undefined> {
  return { media_type: 'CAROUSEL', children: childIds.join(','), text: text || undefined, reply_to_id: replyToId };
}

export interface ThreadsReply {
  id: string;
  text?: string;
  username?: string;
  timestamp: string;
  replied_to?: { id: string };
  is_reply_owned_by_me?: boolean;
  has_replies?: boolean;
}

export const REPLY_FIELDS = 'id,text,username,timestamp,replied_to,is_reply_owned_by_me,hide_status,has_replies';

/** `/conversation` is flat: a reply whose parent is the post itself is top-level (no parent). */
export function commentOf(r: ThreadsReply, rootPostId: string, repliesInPage: number): PlatformComment {
  const parent = r.replied_to?.id && r.replied_to.id !== rootPostId ? r.replied_to.id : null;
  const username = r.username ?? '';
  return {
    platformCommentId: r.id,
    platformParentId: parent,
    author: { handle: username, displayName: username, platformId: username, avatarUrl: null },
    text: r.text ?? '',
    createdAt: new Date(r.timestamp).toISOString(),
    likes: 0,
    // Threads gives `has_replies`, not a count: count what this page holds, at least one when it says there are some.
    replies: Math.max(repliesInPage, r.has_replies ? 1 : 0),
    own: r.is_reply_owned_by_me === true,
  };
}
