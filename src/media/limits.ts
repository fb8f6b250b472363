import { capabilities, placementMedia } from '../platforms/capabilities';
import type { PlatformSlug } from '../platforms/types';
import { formatBytes, mediaUnsupported } from './errors';
import type { MediaFacts } from './sniff';

/**
 * The largest files Herald takes at all, derived from the capability table: nothing bigger can be published on any
 * platform, so it is refused before it is stored. Each platform's own, smaller limit is checked by the post rules.
 */
const rules = Object.values(capabilities).map((c) => c.media);

/** The largest file a platform takes, image or video, in any placement (an instagram reel's video, 300 MB). */
export function largestFileOf(platform: PlatformSlug): number {
  const placements = [capabilities[platform].media, ...Object.values(placementMedia[platform] ?? {})];
  return Math.max(...placements.flatMap((placement) => [placement.maxImageBytes, placement.maxVideoBytes]));
}

export const mediaLimits = {
  maxImageBytes: Math.max(...rules.map((r) => r.maxImageBytes)),
  maxVideoBytes: Math.max(...rules.map((r) => r.maxVideoBytes)),
  get maxBytes(): number {
    return Math.max(this.maxImageBytes, this.maxVideoBytes);
  },
} as const;

/** Longest media URL accepted (longer ones are refused before any request). */
export const MAX_MEDIA_URL_LENGTH = 2048;

export function requireWithinLimits(facts: MediaFacts, url?: string | URL): MediaFacts {
  const limit = facts.kind === 'image' ? mediaLimits.maxImageBytes : mediaLimits.maxVideoBytes;
  if (facts.size > limit) {
    throw mediaUnsupported(`Media is too large: the ${facts.kind} is ${formatBytes(facts.size)}, and no platform accepts ${facts.kind}s over ${formatBytes(limit)}`, 'too_large', url);
  }
  return facts;
}
