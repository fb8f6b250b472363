import type { PlatformSlug } from './types';

/**
 * What each platform can do and the limits it sets, as data (publishing-api.md "Per-platform text limits",
 * "Media rules", "First comment rules", "Platform delete support", "Capabilities by platform", sync windows).
 * Validators, workflows and the comment service read this table; nothing else spells these numbers. Where the
 * contract gives no number (x's GIF on its own and video duration, alt text lengths, photo shapes, threads' links),
 * the platform's own limit from the protocol sheet is used, so that what the platform will refuse is refused at
 * scheduling time (Media rule 5).
 */

export type ImageFormat = 'jpeg' | 'png' | 'webp' | 'gif';
export type VideoFormat = 'mp4' | 'mov';

export interface MediaRules {
  imageFormats: readonly ImageFormat[];
  maxImageBytes: number;
  maxImages: number;
  videoFormats: readonly VideoFormat[];
  maxVideoBytes: number;
  /** Items allowed in `media_urls` (and any media spelling). */
  maxItems: number;
  /** A GIF is posted on its own, never with other items (x: "4 photos or 1 GIF or 1 video"). */
  gifAlone?: true;
  /** Shortest and longest video the platform takes, in milliseconds; absent = no duration limit. */
  videoDurationMs?: { min: number; max: number };
  /**
   * Picture size of an image sent as a photo, each bound optional: width + height at most `maxSidesSum` pixels, the
   * long side at most `maxAspect` times the short one (telegram: 10,000 and 20; threads: 10), width divided by height
   * within `widthToHeight` (instagram feed: 4:5 to 1.91:1). A GIF on its own goes as an animation, not a photo, and is
   * not held to it. Absent = no picture-size limit known.
   */
  photoDimensions?: { maxSidesSum?: number; maxAspect?: number; widthToHeight?: { min: number; max: number; label: string } };
}

export interface CommentCapabilities {
  list: boolean;
  reply: boolean;
  hide: boolean;
  /** threads: `manage_reply` hides top-level replies only (protocols.md section 7); a nested one is not sent. */
  hideTopLevelOnly?: true;
  deleteOwn: boolean;
  deleteAny: boolean;
}

interface PlatformCapabilities {
  maxChars: number;
  /** x premium accounts. */
  maxCharsPremium?: number;
  /** telegram: a caption is shorter than a message. */
  maxCharsWithMedia?: number;
  /** UTF-8 bytes the text may take besides `maxChars` (bluesky: the post lexicon's maxLength 3,000 beside 300 graphemes). */
  maxTextBytes?: number;
  /** Different links a text may hold (threads: 5; Meta's text-attachments page, error THREADS_API__LINK_LIMIT_EXCEEDED). */
  maxLinks?: number;
  media: MediaRules;
  mediaRequired: boolean;
  altText: boolean;
  /** Longest alt text the platform takes, in code points; absent = no limit known. */
  maxAltTextChars?: number;
  firstComment: boolean;
  /** Parts of a thread are published as a reply chain; otherwise as standalone posts (warning `thread_not_native`). */
  nativeThreads: boolean;
  /** Published posts can be deleted. Exceptions by account or placement: `deleteSupported`. */
  delete: boolean;
  /** Hours after which the platform refuses deletes (telegram: 48). */
  deleteWindowHours?: number;
  /** Placements and the options each carries; absent = the platform takes no `configuration` block. */
  placements?: Readonly<Record<string, readonly string[]>>;
  comments: CommentCapabilities;
  /**
   * Comments nest one level deep (the Graph API's facebook and instagram comments): a reply to a reply is filed
   * under the top-level comment, beside the reply it answers.
   */
  repliesNestOneLevel?: true;
  /** Comment refresh windows in seconds: [sync=auto, sync=true]. */
  syncWindowSeconds: readonly [number, number];
}

const MB = 1_000_000;
/** A platform or an account with no comment actions (telegram; a LinkedIn member profile, `commentCapabilitiesFor`). */
export const noComments: CommentCapabilities = { list: false, reply: false, hide: false, deleteOwn: false, deleteAny: false };

export const capabilities: Readonly<Record<PlatformSlug, PlatformCapabilities>> = {
  x: {
    maxChars: 280,
    maxCharsPremium: 25_000,
    media: {
      imageFormats: ['jpeg', 'png', 'webp', 'gif'],
      maxImageBytes: 5 * MB,
      maxImages: 4,
      videoFormats: ['mp4', 'mov'],
      maxVideoBytes: 512 * MB,
      maxItems: 4,
      gifAlone: true,
      videoDurationMs: { min: 500, max: 140_000 },
    },
    mediaRequired: false,
    altText: true,
    maxAltTextChars: 1_000,
    firstComment: true,
    nativeThreads: true,
    delete: true,
    comments: { list: true, reply: true, hide: false, deleteOwn: true, deleteAny: false },
    syncWindowSeconds: [15 * 60, 15 * 60],
  },
  bluesky: {
    maxChars: 300,
    maxTextBytes: 3_000,
    media: { imageFormats: ['jpeg', 'png', 'webp', 'gif'], maxImageBytes: 977_000, maxImages: 4, videoFormats: [], maxVideoBytes: 0, maxItems: 4 },
    mediaRequired: false,
    altText: true,
    firstComment: false,
    nativeThreads: true,
    delete: true,
    comments: { list: true, reply: true, hide: false, deleteOwn: true, deleteAny: false },
    syncWindowSeconds: [2 * 60, 60],
  },
  linkedin: {
    maxChars: 3_000,
    media: { imageFormats: ['jpeg', 'png', 'gif'], maxImageBytes: 8 * MB, maxImages: 4, videoFormats: [], maxVideoBytes: 0, maxItems: 4 },
    mediaRequired: false,
    altText: true,
    firstComment: false,
    nativeThreads: false,
    delete: true,
    // Page accounts only; a member profile has no comment read (see `commentCapabilitiesFor`).
    comments: { list: true, reply: true, hide: false, deleteOwn: true, deleteAny: false },
    syncWindowSeconds: [5 * 60, 60],
  },
  threads: {
    maxChars: 500,
    maxLinks: 5,
    // protocols.md section 7: images of "aspect ≤10:1" (Threads fails the container at publish otherwise).
    media: { imageFormats: ['jpeg', 'png', 'webp', 'gif'], maxImageBytes: 5 * MB, maxImages: 1, videoFormats: [], maxVideoBytes: 0, maxItems: 1, photoDimensions: { maxAspect: 10 } },
    mediaRequired: false,
    altText: false,
    firstComment: true,
    nativeThreads: true,
    delete: true,
    comments: { list: true, reply: true, hide: true, hideTopLevelOnly: true, deleteOwn: true, deleteAny: false },
    syncWindowSeconds: [5 * 60, 60],
  },
  mastodon: {
    maxChars: 500,
    media: { imageFormats: ['jpeg', 'png', 'webp', 'gif'], maxImageBytes: 8 * MB, maxImages: 4, videoFormats: ['mp4', 'mov'], maxVideoBytes: 40 * MB, maxItems: 4 },
    mediaRequired: false,
    altText: true,
    maxAltTextChars: 1_500,
    firstComment: false,
    nativeThreads: true,
    delete: true,
    comments: { list: true, reply: true, hide: false, deleteOwn: true, deleteAny: false },
    syncWindowSeconds: [2 * 60, 60],
  },
  instagram: {
    maxChars: 2_200,
    media: {
      imageFormats: ['jpeg', 'png'], maxImageBytes: 8 * MB, maxImages: 10, videoFormats: [], maxVideoBytes: 0, maxItems: 10,
      // protocols.md section 6: feed images of "aspect 4:5–1.91:1" (Instagram refuses the container otherwise; not a story's).
      photoDimensions: { widthToHeight: { min: 4 / 5, max: 1.91, label: '4:5 (portrait) to 1.91:1 (landscape)' } },
    },
    mediaRequired: true,
    altText: true,
    firstComment: true,
    nativeThreads: false,
    // Only when connected via facebook (see `deleteSupported`).
    delete: true,
    placements: {
      feed: ['placement', 'collaborators', 'user_tags'],
      story: ['placement', 'user_tags'],
      reel: ['placement', 'collaborators', 'user_tags', 'cover', 'video_cover_timestamp_ms', 'share_to_feed', 'trial_reel'],
    },
    comments: { list: true, reply: true, hide: true, deleteOwn: true, deleteAny: true },
    repliesNestOneLevel: true,
    syncWindowSeconds: [5 * 60, 60],
  },
  facebook: {
    maxChars: 63_206,
    media: { imageFormats: ['jpeg', 'png', 'gif'], maxImageBytes: 10 * MB, maxImages: 10, videoFormats: [], maxVideoBytes: 0, maxItems: 10 },
    mediaRequired: false,
    altText: true,
    firstComment: true,
    nativeThreads: false,
    delete: true,
    placements: { feed: ['placement', 'link'], story: ['placement'] },
    comments: { list: true, reply: true, hide: true, deleteOwn: true, deleteAny: true },
    repliesNestOneLevel: true,
    syncWindowSeconds: [5 * 60, 60],
  },
  telegram: {
    maxChars: 4_096,
    maxCharsWithMedia: 1_024,
    media: {
      imageFormats: ['jpeg', 'png', 'gif', 'webp'],
      maxImageBytes: 5 * MB,
      maxImages: 10,
      videoFormats: ['mp4'],
      maxVideoBytes: 20 * MB,
      maxItems: 10,
      // sendPhoto: "width and height must not exceed 10000 in total. Width and height ratio must be at most 20".
      photoDimensions: { maxSidesSum: 10_000, maxAspect: 20 },
    },
    mediaRequired: false,
    altText: false,
    firstComment: false,
    nativeThreads: false,
    delete: true,
    deleteWindowHours: 48,
    comments: noComments,
    syncWindowSeconds: [5 * 60, 60],
  },
};

/** Platforms that accept a first comment, in the order messages name them. */
export const firstCommentPlatforms = (Object.keys(capabilities) as PlatformSlug[]).filter((p) => capabilities[p].firstComment);

/** Draft text may be this long whatever the platform (publishing-api.md "Limits"). */
export const DRAFT_MAX_CHARS = 25_000;
export const MAX_FANOUT_ACCOUNTS = 25;
export const SCHEDULE_SPACING_MINUTES = 5;

/**
 * How each platform counts characters toward `maxChars` (added by the posts-rules work; read by
 * `src/posts/rules/text-length.ts`):
 * - `x_weighted`: X's twitter-text v3 weighting (URLs 23, CJK and emoji 2, most Latin 1).
 * - `graphemes`: user-perceived characters (Bluesky's 300 is graphemes).
 * - `mastodon`: user-perceived characters, every http(s) URL counting 23 and a remote mention only its username
 *   (`@alice@example.com` counts as `@alice`): Mastodon's own rule (docs.joinmastodon.org "Posting": "Only the username
 *   part will count against your character limit"; its length validator counts grapheme clusters).
 * - `utf16`: UTF-16 code units (Telegram's 4,096 and 1,024).
 * - `code_points`: Unicode code points.
 * - `code_points_emoji_utf8`: Unicode code points, every emoji counting its UTF-8 bytes (Threads' own rule).
 */
export type TextCounting = 'x_weighted' | 'graphemes' | 'mastodon' | 'utf16' | 'code_points' | 'code_points_emoji_utf8';

export const textCounting: Readonly<Record<PlatformSlug, TextCounting>> = {
  x: 'x_weighted',
  bluesky: 'graphemes',
  linkedin: 'code_points',
  threads: 'code_points_emoji_utf8',
  mastodon: 'mastodon',
  instagram: 'code_points',
  facebook: 'code_points',
  telegram: 'utf16',
};

/**
 * Media rules of placements other than the platform's default feed ("Placement decides the media rules").
 * A placement not listed here uses `capabilities[platform].media`. `required`: the placement cannot go out without
 * media; `videoRequired`: it takes only a video.
 */
export interface PlacementMediaRules extends MediaRules {
  required: boolean;
  videoRequired: boolean;
}

export const placementMedia: Readonly<Partial<Record<PlatformSlug, Readonly<Record<string, PlacementMediaRules>>>>> = {
  instagram: {
    // Meta content publishing: a story is one image or one video (video up to 100 MB); a reel is one video (up to 300 MB)
    // of 3 s to 15 min (protocols.md section 6; Instagram fails the container of any other length at publish).
    // The feed's 4:5 to 1.91:1 is not a story's (a story is 9:16).
    story: { ...capabilities.instagram.media, maxImages: 1, maxItems: 1, videoFormats: ['mp4', 'mov'], maxVideoBytes: 100 * MB, photoDimensions: undefined, required: true, videoRequired: false },
    reel: {
      imageFormats: [],
      maxImageBytes: 0,
      maxImages: 0,
      videoFormats: ['mp4', 'mov'],
      maxVideoBytes: 300 * MB,
      videoDurationMs: { min: 3_000, max: 15 * 60_000 },
      maxItems: 1,
      required: true,
      videoRequired: true,
    },
  },
  facebook: {
    // A Page story is one image; the media table gives facebook no video.
    story: { ...capabilities.facebook.media, maxImages: 1, maxItems: 1, required: true, videoRequired: false },
  },
};

/** Where a platform that deletes posts cannot: by the account's connection (`via`) or by the post's placement. */
interface DeleteContext {
  /** instagram: `instagram` (the default) or `facebook`. */
  via?: string;
  /** `configuration.placement` of the post; `feed` when absent. */
  placement?: string;
}

const deleteExceptions: Partial<Record<PlatformSlug, ReadonlyArray<DeleteContext>>> = {
  // A Page story cannot be deleted through the API; it disappears after 24 hours.
  facebook: [{ placement: 'story' }],
  // The Instagram-Login API has no media delete; accounts connected via Facebook can delete whatever the placement.
  instagram: [{ via: 'instagram' }],
};
const defaultVia: Partial<Record<PlatformSlug, string>> = { instagram: 'instagram' };

/** publishing-api.md "Platform delete support": false means the core answers 501 `delete_unsupported`. */
export function deleteSupported(platform: PlatformSlug, ctx: DeleteContext = {}): boolean {
  if (!capabilities[platform].delete) return false;
  const via = ctx.via ?? defaultVia[platform];
  const placement = ctx.placement ?? 'feed';
  return !(deleteExceptions[platform] ?? []).some(
    (e) => (e.via === undefined || e.via === via) && (e.placement === undefined || e.placement === placement),
  );
}
