import { z } from 'zod';
import type { PlatformComment } from '../types';

/** X API v2 shapes Herald reads (protocols.md section 1). */
export interface XUser {
  id: string;
  name: string;
  username: string;
  profile_image_url?: string;
  verified?: boolean;
  /** 'blue', 'business', 'government', 'none' (a string: a value X adds later is no reason to refuse a connect). */
  verified_type?: string;
  /** 'Basic', 'Premium', 'PremiumPlus', 'None'. */
  subscription_type?: string;
}

/** What `verify` reads of `GET /2/users/me`. */
export const meAnswer = z.object({
  data: z.object({
    id: z.string().min(1),
    username: z.string().min(1),
    name: z.string(),
    verified_type: z.string().optional(),
    subscription_type: z.string().optional(),
  }),
});

export interface XTweet {
  id: string;
  text: string;
  author_id?: string;
  created_at?: string;
  conversation_id?: string;
  in_reply_to_user_id?: string;
  referenced_tweets?: Array<{ type: 'replied_to' | 'quoted' | 'retweeted'; id: string }>;
  public_metrics?: { like_count?: number; reply_count?: number };
  attachments?: { media_keys?: string[] };
  entities?: { urls?: Array<{ url: string; expanded_url?: string; media_key?: string }> };
}

export const USER_FIELDS = 'username,name,profile_image_url,verified,verified_type,subscription_type';
export const COMMENT_TWEET_FIELDS = 'author_id,created_at,in_reply_to_user_id,referenced_tweets,conversation_id,public_metrics';

/** Without a stored username (never after verify) X's username-free link still resolves; a created post never fails on it. */
export function tweetUrl(username: string | undefined, id: string): string {
  return username ? `https://x.com/${username}/status/${id}` : `https://x.com/i/web/status/${id}`;
}

/** Any paid X subscription unlocks long posts; `verified_type: blue` is the older signal for the same thing. */
export function isPremium(user: XUser): boolean {
  if (user.subscription_type) return user.subscription_type !== 'None';
  return user.verified_type === 'blue';
}

export function createTweetBody(text: string, mediaIds: string[], replyToId?: string): Record<string, unknown> {
  return {
    ...(text ? { text } : {}),
    ...(mediaIds.length ? { media: { media_ids: mediaIds } } : {}),
    ...(replyToId ? { reply: { in_reply_to_tweet_id: replyToId } } : {}),
  };
}

export function repliedToId(tweet: XTweet): string | null {
  return tweet.referenced_tweets?.find((r) => r.type === 'replied_to')?.id ?? null;
}

/** What each tweet a search page included (`includes.tweets`) answers: the next link up a reply's chain. */
export function ancestorsOf(included: readonly XTweet[]): Array<{ id: string; parentId: string }> {
  return included.flatMap((t) => {
    const parentId = typeof t?.id === 'string' ? repliedToId(t) : null;
    return parentId ? [{ id: t.id, parentId }] : [];
  });
}

/** Tweet fields a lookup after a lost create reads (`lookupShapeOfTweet`). */
export const LOOKUP_TWEET_FIELDS = 'created_at,referenced_tweets,attachments,entities';

/** A link as X delimits it: trailing punctuation is not part of it. */
const LINK = /https?:\/\/\S*[^\s.,;:!?'")\]]/g;
/** Where a link stood, in a compared text (a character no post text carries). */
const LINK_MARK = '\uFFFC';

/** What a lookup after a lost create compares: the text with its links marked, the links themselves, the media count. */
interface LookupShape {
  text: string;
  links: string[];
  media: number;
}

/** The post Herald sent. */
export function lookupShapeOfRequest(text: string, mediaCount: number): LookupShape {
  return { text: comparableText(text), links: text.match(LINK) ?? [], media: mediaCount };
}

/**
 * The post as X stores it: links become t.co links (their own in `entities.urls[].expanded_url`), attached media add
 * a trailing t.co link of their own (an entity with a `media_key`), and &, <, > come back HTML-escaped.
 */
export function lookupShapeOfTweet(tweet: XTweet): LookupShape {
  const entities = tweet.entities?.urls ?? [];
  let text = tweet.text;
  for (const entity of entities) if (entity.media_key) text = text.replace(entity.url, '');
  const links = (text.match(LINK) ?? []).map((link) => entities.find((e) => e.url === link)?.expanded_url ?? link);
  return { text: comparableText(text), links, media: tweet.attachments?.media_keys?.length ?? 0 };
}

export function sameLookupShape(a: LookupShape, b: LookupShape): boolean {
  return a.text === b.text && a.media === b.media && a.links.length === b.links.length && a.links.every((link, i) => link === b.links[i]);
}

/** Texts compared with each link marked where it stood (X rewrites links) and entities decoded. */
function comparableText(text: string): string {
  return decodeEntities(text.replace(LINK, LINK_MARK))
    .replace(/\s+/g, ' ')
    .trim();
}

/** X escapes exactly these three in post text. */
function decodeEntities(text: string): string {
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

export function toComment(tweet: XTweet, users: Map<string, XUser>, rootId: string, ownUserId: string | undefined): PlatformComment {
  const author = users.get(tweet.author_id ?? '');
  const parent = repliedToId(tweet);
  return {
    platformCommentId: tweet.id,
    // A reply to the post itself is top level.
    platformParentId: parent === rootId ? null : parent,
    author: {
      handle: author?.username ?? tweet.author_id ?? '',
      displayName: author?.name ?? author?.username ?? '',
      platformId: tweet.author_id ?? '',
      avatarUrl: author?.profile_image_url ?? null,
    },
    text: decodeEntities(tweet.text),
    createdAt: tweet.created_at ?? '',
    likes: tweet.public_metrics?.like_count ?? 0,
    replies: tweet.public_metrics?.reply_count ?? 0,
    own: ownUserId !== undefined && tweet.author_id === ownUserId,
  };
}
