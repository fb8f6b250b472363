import { capabilities } from '../../platforms/capabilities';
import type { PlatformSlug } from '../../platforms/types';
import type { ConfigurationBlock } from './inputs';

/** The placement a block asks for (`feed` when it names none); null on platforms without placements. */
export function placementOf(platform: PlatformSlug, block: ConfigurationBlock | null): string | null {
  if (!capabilities[platform].placements) return null;
  const asked = block?.placement;
  return typeof asked === 'string' ? asked : 'feed';
}

/** Stories and reels are single posts with no text and no first comment. */
export function isSinglePostPlacement(placement: string | null): placement is 'story' | 'reel' {
  return placement === 'story' || placement === 'reel';
}

/** `an instagram`, `a facebook`. */
export function withArticle(platform: PlatformSlug): string {
  return `${/^[aeiou]/.test(platform) ? 'an' : 'a'} ${platform}`;
}

export function placementPhrase(platform: PlatformSlug, placement: string): string {
  return `${withArticle(platform)} ${placement}`;
}
