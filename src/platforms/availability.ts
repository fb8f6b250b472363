import { ApiError } from '../errors';
import { platformSlugs, type PlatformSlug } from './types';

/**
 * Which platform slugs Herald answers, and how (decisions.md "Running it"): the eight platforms are built; some
 * recognised slugs are only announced (501 platform_coming_soon); some are known and never supported
 * (501 platform_unsupported); anything else is a client mistake (400 bad_request).
 * `comingSoon` holds entries of HERALD_COMING_SOON: `platform` or `platform:feature`.
 */

export const DEFAULT_COMING_SOON =
  'tiktok,youtube,pinterest,google_business,facebook:comments,instagram:comments,threads:comments,linkedin:comments';

const neverSupported = new Set(['snapchat', 'whatsapp', 'discord', 'reddit', 'tumblr', 'twitch', 'wechat']);
const announced = new Set(['tiktok', 'youtube', 'pinterest', 'google_business']);

type PlatformFeature = 'comments';

export function parseComingSoon(raw: string): ReadonlySet<string> {
  return new Set(
    raw
      .split(',')
      .map((entry) => entry.trim().toLowerCase())
      .filter(Boolean),
  );
}

export function isPlatformSlug(value: string): value is PlatformSlug {
  return (platformSlugs as readonly string[]).includes(value);
}

const displayNames: Record<string, string> = {
  x: 'X',
  bluesky: 'Bluesky',
  linkedin: 'LinkedIn',
  threads: 'Threads',
  mastodon: 'Mastodon',
  instagram: 'Instagram',
  facebook: 'Facebook',
  telegram: 'Telegram',
  tiktok: 'TikTok',
  youtube: 'YouTube',
  pinterest: 'Pinterest',
  google_business: 'Google Business Profile',
};

export function platformName(slug: string): string {
  return displayNames[slug] ?? slug;
}

/** Returns the slug as a PlatformSlug or throws the ApiError the spec gives for it. */
export function requireAvailablePlatform(value: string, comingSoon: ReadonlySet<string>, feature?: PlatformFeature): PlatformSlug {
  const slug = value.trim().toLowerCase();
  if (neverSupported.has(slug)) {
    throw new ApiError('platform_unsupported', `${platformName(slug)} is not supported.`);
  }
  if (!isPlatformSlug(slug) && !announced.has(slug)) {
    throw new ApiError('bad_request', `Unknown platform "${value}". Use one of: ${platformSlugs.join(', ')}.`);
  }
  if (comingSoon.has(slug) || !isPlatformSlug(slug)) {
    throw new ApiError('platform_coming_soon', `${platformName(slug)} is coming soon and not yet available.`);
  }
  if (feature && comingSoon.has(`${slug}:${feature}`)) {
    throw new ApiError('platform_coming_soon', `${platformName(slug)} ${feature} are coming soon and not yet available.`);
  }
  return slug;
}
