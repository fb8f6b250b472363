import { z } from 'zod';
import { capabilities } from '../capabilities';
import { PlatformFailure, type AccountIdentity, type MediaItem, type PlatformComment } from '../types';

/** Herald ↔ Instagram content-publishing shapes (protocols.md section 6). */

export const DEFAULT_INSTAGRAM_ORIGIN = 'https://graph.instagram.com/v25.0';
export const DEFAULT_FACEBOOK_GRAPH_ORIGIN = 'https://graph.facebook.com/v25.0';

export type Via = 'instagram' | 'facebook';
export type Placement = 'feed' | 'story' | 'reel';

export interface InstagramUser {
  id: string;
  user_id?: string;
  username?: string;
  name?: string;
}

/** What `verify` reads of the Instagram user node (via facebook). */
export const userAnswer = z.object({ id: z.string().min(1), username: z.string().optional(), name: z.string().optional() });

/** What `verify` reads of `GET /me` via instagram: the account's id is `user_id` (`id` is app-scoped, the fallback). */
export const meAnswer = z
  .object({ id: z.string().min(1).optional(), user_id: z.string().min(1).optional(), username: z.string().optional(), name: z.string().optional() })
  .refine((me) => (me.user_id ?? me.id) !== undefined, 'neither user_id nor id');

export const USER_FIELDS = 'id,username,name';
export const ME_FIELDS = 'user_id,username,name';

export function identityOf(user: Pick<InstagramUser, 'username' | 'name'>, igUserId: string, via: Via): AccountIdentity {
  const username = user.username ?? igUserId;
  return {
    platformAccountId: igUserId,
    username,
    displayName: user.name ?? null,
    profileUrl: `https://www.instagram.com/${username}/`,
    kind: null,
    settings: { igUserId, via, username },
  };
}

export function placementOf(configuration: Record<string, unknown> | undefined): Placement {
  const placement = configuration?.placement;
  return placement === 'story' || placement === 'reel' ? placement : 'feed';
}

const json = (value: unknown) => (value === undefined ? undefined : JSON.stringify(value));

function publicUrlOf(item: MediaItem): string {
  if (!item.publicUrl) throw new PlatformFailure('instagram', 'permanent', 'Instagram refused the post: Instagram fetches media from a public URL and none was available.');
  return item.publicUrl;
}

/** Fields of one media container; `carouselItem` for the children of a carousel (no caption, no collaborators). */
export function containerFields(item: MediaItem, placement: Placement, text: string, options: Record<string, unknown>, carouselItem = false): Record<string, string | undefined> {
  const alt = capabilities.instagram.altText && item.kind === 'image' ? item.alt : undefined;
  const userTags = json(options.user_tags);
  if (placement === 'story') {
    const media = item.kind === 'video' ? { video_url: publicUrlOf(item) } : { image_url: publicUrlOf(item) };
    return { media_type: 'STORIES', ...media, user_tags: userTags };
  }
  if (placement === 'reel' || (item.kind === 'video' && !carouselItem)) {
    // Every feed video is a reel on Instagram; `share_to_feed` keeps it in the grid unless the option says otherwise.
    return {
      media_type: 'REELS', video_url: publicUrlOf(item), caption: text || undefined, collaborators: json(options.collaborators), user_tags: userTags,
      cover_url: typeof options.cover === 'string' ? options.cover : undefined,
      thumb_offset: options.video_cover_timestamp_ms === undefined ? undefined : String(options.video_cover_timestamp_ms),
      share_to_feed: options.share_to_feed === undefined ? undefined : String(options.share_to_feed),
      trial_params: trialParams(options.trial_reel),
    };
  }
  if (carouselItem) {
    const media = item.kind === 'video' ? { media_type: 'VIDEO', video_url: publicUrlOf(item) } : { image_url: publicUrlOf(item), alt_text: alt };
    return { is_carousel_item: 'true', ...media, user_tags: userTags };
  }
  return { image_url: publicUrlOf(item), alt_text: alt, caption: text || undefined, collaborators: json(options.collaborators), user_tags: userTags };
}

/** `trial_reel`: true (graduate manually) or a graduation strategy name. */
function trialParams(value: unknown): string | undefined {
  if (value === undefined || value === false) return undefined;
  return JSON.stringify({ graduation_strategy: typeof value === 'string' ? value : 'MANUAL' });
}

export function carouselFields(childIds: string[], text: string, options: Record<string, unknown>): Record<string, string | undefined> {
  return { media_type: 'CAROUSEL', children: childIds.join(','), caption: text || undefined, collaborators: json(options.collaborators) };
}

export interface InstagramComment {
  id: string;
  text?: string;
  timestamp: string;
  username?: string;
  from?: { id: string; username?: string };
  like_count?: number;
  hidden?: boolean;
  replies?: { data: InstagramComment[]; paging?: { cursors?: { after?: string }; next?: string } };
}

const REPLY_FIELDS = 'id,text,timestamp,username,from{id,username},like_count,hidden';
export const COMMENT_FIELDS = `${REPLY_FIELDS},replies{${REPLY_FIELDS}}`;
export const REPLY_LIST_FIELDS = REPLY_FIELDS;

export function commentOf(c: InstagramComment, parentId: string | null, replies: number, igUserId: string): PlatformComment {
  const username = c.from?.username ?? c.username ?? '';
  return {
    platformCommentId: c.id,
    platformParentId: parentId,
    author: { handle: username, displayName: username, platformId: c.from?.id ?? '', avatarUrl: null },
    text: c.text ?? '',
    createdAt: new Date(c.timestamp.replace(/\+0000$/, 'Z')).toISOString(),
    likes: c.like_count ?? 0,
    replies,
    own: c.from?.id === igUserId,
  };
}
