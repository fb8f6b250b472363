import { capabilities, placementMedia, type MediaRules, type PlacementMediaRules } from '../../platforms/capabilities';
import { formatBytes } from '../../media/errors';
import type { PlatformSlug } from '../../platforms/types';
import type { ConfigurationBlock, MediaRef, MediaSpelling } from './inputs';
import { formatName, natureFromContent, natureFromUrl, type MediaNature } from './media-formats';
import { placementOf, placementPhrase } from './placement';
import { formatCount, listWords, violation, type Violation } from './violation';

/**
 * Media rules (publishing-api.md "Media rules", numbered): run on what the client sent, before download
 * (`checkRequestedMedia`: counts, spelling, kinds and formats guessed from URL extensions), and again on the real
 * bytes (`checkMediaContent`: content type and size read by the media layer). The placement decides the rules.
 * Codes: too many items, missing required media and alt text over the platform's limit are `bad_request`; anything
 * the platform cannot accept (video where images only, a format it does not take, a file over its limit, a video or
 * an x GIF with other items, a video too short or too long, a photo of a picture size it refuses) is `unsupported_media`.
 */

/** What the media layer learnt from the downloaded or uploaded bytes (`MediaFacts` of `src/media/sniff.ts` fits). */
export interface MediaContent {
  mimeType: string;
  size: number;
  width?: number | null;
  height?: number | null;
  kind: 'image' | 'video';
  /** Video only; null when the file does not give it. */
  durationMs?: number | null;
}

interface Item {
  label: string;
  nature: MediaNature | null;
  size?: number;
  width?: number | null;
  height?: number | null;
  durationMs?: number | null;
  alt?: string;
}

type Rules = MediaRules & Partial<Pick<PlacementMediaRules, 'required' | 'videoRequired'>>;

function rulesFor(platform: PlatformSlug, block: ConfigurationBlock | null): { rules: Rules; where: string } {
  const placement = placementOf(platform, block);
  const special = placement ? placementMedia[platform]?.[placement] : undefined;
  return special && placement ? { rules: special, where: placementPhrase(platform, placement) } : { rules: capabilities[platform].media, where: platform };
}

/** `6.2 MB`; exact bytes when rounding would make a file just over the limit read like the limit itself. */
function sizeOver(bytes: number, limit: number): string {
  const rounded = formatBytes(bytes);
  return rounded === formatBytes(limit) ? `${formatCount(bytes)} bytes` : rounded;
}

function accepted(rules: MediaRules): string {
  const images = rules.imageFormats.map(formatName);
  const videos = rules.videoFormats.map(formatName);
  const parts = [images.length ? `${listWords(images)} images` : '', videos.length ? `${listWords(videos)} video` : ''].filter(Boolean);
  return parts.length ? listWords(parts) : 'no media';
}

/** The platform or placement cannot go out without media (instagram; stories and reels). */
export function mediaRequired(platform: PlatformSlug, block: ConfigurationBlock | null): boolean {
  return rulesFor(platform, block).rules.required ?? capabilities[platform].mediaRequired;
}

function checkItems(platform: PlatformSlug, block: ConfigurationBlock | null, items: Item[], spelling: string): Violation[] {
  const { rules, where } = rulesFor(platform, block);
  const required = mediaRequired(platform, block);
  if (items.length === 0) {
    if (!required) return [];
    const what = rules.videoRequired ? 'one video' : rules.maxItems === 1 ? 'one image or one video' : 'media';
    return [violation('bad_request', `${where} requires ${what}; text-only posts are refused`)];
  }
  if (items.length > rules.maxItems) {
    return [violation('bad_request', `${where} takes at most ${formatCount(rules.maxItems)} media item${rules.maxItems === 1 ? '' : 's'}; got ${formatCount(items.length)}`)];
  }
  for (const item of items) {
    const nature = item.nature;
    if (!nature) continue;
    const formats: readonly string[] = nature.kind === 'video' ? rules.videoFormats : rules.imageFormats;
    if (formats.length === 0) {
      return [violation('unsupported_media', `${item.label} is ${nature.kind === 'video' ? 'a video' : 'an image'}; ${where} takes ${accepted(rules)}`)];
    }
    if (nature.format === null || !formats.includes(nature.format)) {
      return [violation('unsupported_media', `${item.label} is ${nature.name}; ${where} takes ${accepted(rules)}`)];
    }
  }
  if (items.length > 1 && items.some((item) => item.nature?.kind === 'video')) {
    return [violation('unsupported_media', `A video is always posted on its own; ${spelling} has ${items.length} items including a video`)];
  }
  if (rules.gifAlone && items.length > 1 && items.some((item) => item.nature?.format === 'gif')) {
    return [violation('unsupported_media', `${where} posts a GIF on its own; ${spelling} has ${items.length} items including a GIF`)];
  }
  for (const item of items) {
    if (!item.nature || item.size === undefined) continue;
    const max = item.nature.kind === 'video' ? rules.maxVideoBytes : rules.maxImageBytes;
    if (item.size > max) {
      return [violation('unsupported_media', `${item.label} is ${item.nature.kind === 'image' ? 'an image' : 'a video'} of ${sizeOver(item.size, max)}; ${where} accepts ${item.nature.kind}s up to ${formatBytes(max)}`)];
    }
  }
  const duration = rules.videoDurationMs;
  for (const item of items) {
    if (!duration || item.nature?.kind !== 'video' || item.durationMs == null) continue;
    if (item.durationMs < duration.min || item.durationMs > duration.max) {
      const length = seconds(item.durationMs, item.durationMs < duration.min ? Math.floor : Math.ceil);
      return [violation('unsupported_media', `${item.label} is a video of ${length} s; ${where} accepts videos of ${seconds(duration.min)} to ${seconds(duration.max)} s`)];
    }
  }
  const dimensions = checkPhotoDimensions(rules, where, items);
  if (dimensions.length) return dimensions;
  return checkAltText(platform, items);
}

/**
 * Picture size of images sent as photos (telegram: width + height ≤ 10,000, sides at most 20:1; threads: sides at
 * most 10:1; instagram feed: width / height from 4:5 to 1.91:1); a GIF alone is an animation.
 */
function checkPhotoDimensions(rules: MediaRules, where: string, items: Item[]): Violation[] {
  const limit = rules.photoDimensions;
  if (!limit) return [];
  for (const item of items) {
    if (item.nature?.kind !== 'image' || !item.width || !item.height) continue;
    if (item.nature.format === 'gif' && items.length === 1) continue;
    const size = `${formatCount(item.width)} × ${formatCount(item.height)} pixels`;
    if (limit.maxSidesSum !== undefined && item.width + item.height > limit.maxSidesSum) {
      return [violation('unsupported_media', `${item.label} is an image of ${size}; ${where} accepts photos whose width and height add up to at most ${formatCount(limit.maxSidesSum)} pixels`)];
    }
    if (limit.maxAspect !== undefined && Math.max(item.width, item.height) > limit.maxAspect * Math.min(item.width, item.height)) {
      return [violation('unsupported_media', `${item.label} is an image of ${size}; ${where} accepts photos whose long side is at most ${formatCount(limit.maxAspect)} times the short side`)];
    }
    const ratio = limit.widthToHeight;
    // Compared as products, so that an image exactly at a bound (1,080 × 1,350 is 4:5) is never lost to rounding.
    if (ratio && (item.width < ratio.min * item.height - 1e-9 || item.width > ratio.max * item.height + 1e-9)) {
      return [violation('unsupported_media', `${item.label} is an image of ${size}; ${where} accepts photos from ${ratio.label} in width to height`)];
    }
  }
  return [];
}

/** `0.5`, `140`, `140.1`: seconds in tenths, rounded away from the limit so that a video outside it never reads as inside. */
function seconds(ms: number, round: (n: number) => number = Math.round): string {
  return formatCount(round(ms / 100) / 10);
}

function checkAltText(platform: PlatformSlug, items: Item[]): Violation[] {
  const max = capabilities[platform].maxAltTextChars;
  if (max === undefined) return [];
  for (const item of items) {
    const length = item.alt === undefined ? 0 : [...item.alt].length;
    if (length > max) {
      return [violation('bad_request', `${item.label}.alt is ${formatCount(length)} characters; ${platform} takes alt text up to ${formatCount(max)} characters`)];
    }
  }
  return [];
}

/** `media[0]`, or `posts[1].media_urls[0]` with a prefix: how every media refusal names the item, as the client sent it. */
export function mediaItemPath(prefix: string, spelling: MediaSpelling | null, index: number): string {
  return `${prefix}${spelling ?? 'media'}[${index}]`;
}

function labels(spelling: MediaSpelling | null, count: number, prefix: string): string[] {
  return Array.from({ length: count }, (_, i) => mediaItemPath(prefix, spelling, i));
}

/**
 * Before download: counts, required media, and kinds/formats where a URL's extension tells them (uploads are
 * checked with `checkMediaContent` from their stored facts). `prefix` names the part (`posts[1].`).
 */
export function checkRequestedMedia(
  platform: PlatformSlug,
  block: ConfigurationBlock | null,
  media: { refs: MediaRef[]; spelling: MediaSpelling | null },
  prefix = '',
): Violation[] {
  const names = labels(media.spelling, media.refs.length, prefix);
  const items = media.refs.map((ref, i): Item => ({ label: names[i], nature: 'url' in ref ? natureFromUrl(ref.url) : null, alt: ref.alt }));
  return checkItems(platform, block, items, `${prefix}${media.spelling ?? 'media'}`);
}

/** On real content (downloaded URLs, stored uploads), in the order the client listed them. */
export function checkMediaContent(
  platform: PlatformSlug,
  block: ConfigurationBlock | null,
  media: { contents: MediaContent[]; spelling: MediaSpelling | null },
  prefix = '',
): Violation[] {
  const names = labels(media.spelling, media.contents.length, prefix);
  const items = media.contents.map((content, i): Item => ({ label: names[i], nature: natureFromContent(content), size: content.size, width: content.width, height: content.height, durationMs: content.durationMs }));
  return checkItems(platform, block, items, `${prefix}${media.spelling ?? 'media'}`);
}
