import { z } from 'zod';
import { capabilities } from '../../platforms/capabilities';
import type { PlatformSlug } from '../../platforms/types';
import type { ConfigurationBlock } from './inputs';
import { isSinglePostPlacement, placementOf, placementPhrase, withArticle } from './placement';
import { isPlatformSlug } from './resolve-account-body';
import { listWords, violation, type Violation } from './violation';

/**
 * Publishing options (publishing-api.md "Publishing options"): which platforms take a block, which placements exist
 * and which options each placement carries come from the capability table; the value types are below.
 * Code `configuration_unsupported` for anything the platform or placement does not carry; `bad_request` for a value
 * of the wrong type.
 */

const httpUrl = z.string().refine((v) => /^https?:\/\/[^\s/]+/i.test(v), 'must be an http(s) URL');

const optionTypes: Readonly<Record<string, { schema: z.ZodType; expect: string }>> = {
  placement: { schema: z.string(), expect: 'a string' },
  collaborators: { schema: z.array(z.string().min(1)), expect: 'an array of usernames' },
  user_tags: {
    schema: z.array(z.strictObject({ username: z.string().min(1), x: z.number().min(0).max(1).optional(), y: z.number().min(0).max(1).optional() })),
    expect: 'an array of { username, x, y } with x and y between 0 and 1',
  },
  cover: { schema: httpUrl, expect: 'an http(s) URL of the cover image' },
  video_cover_timestamp_ms: { schema: z.number().int().min(0), expect: 'a whole number of milliseconds, 0 or more' },
  share_to_feed: { schema: z.boolean(), expect: 'a boolean' },
  trial_reel: {
    schema: z.union([z.literal(true), z.strictObject({ graduation_strategy: z.enum(['MANUAL', 'SS_PERFORMANCE']) })]),
    expect: 'true, or { graduation_strategy: "MANUAL" | "SS_PERFORMANCE" }',
  },
  link: { schema: httpUrl, expect: 'an http(s) URL' },
};

const orWords = (words: readonly string[]) => listWords(words).replace(/ and ([^ ]+)$/, ' or $1');

const platformsWithOptions = (Object.keys(capabilities) as PlatformSlug[]).filter((p) => capabilities[p].placements);

/** A request-level `configuration`: every key a platform that takes options and that some account of the request uses. */
export function checkConfigurationPlatforms(configuration: Record<string, unknown> | undefined, usedPlatforms: ReadonlySet<PlatformSlug>): Violation[] {
  for (const key of Object.keys(configuration ?? {})) {
    if (!isPlatformSlug(key)) {
      return [violation('configuration_unsupported', `configuration.${key}: ${key} is not a platform; blocks are keyed by platform slug`)];
    }
    if (!capabilities[key].placements) {
      return [violation('configuration_unsupported', `configuration.${key}: ${key} takes no publishing options; only ${listWords(platformsWithOptions)} do`)];
    }
    if (!usedPlatforms.has(key)) {
      return [violation('configuration_unsupported', `configuration.${key}: no account in this request is on ${key}`)];
    }
  }
  return [];
}

/** One account's block: a known placement, options that placement carries, values of the right type. */
export function checkConfigurationBlock(platform: PlatformSlug, block: ConfigurationBlock | null, label = `configuration.${platform}`): Violation[] {
  if (block === null) return [];
  const placements = capabilities[platform].placements;
  if (!placements) {
    return [violation('configuration_unsupported', `${label}: ${platform} takes no publishing options; only ${listWords(platformsWithOptions)} do`)];
  }
  const placement = placementOf(platform, block) ?? 'feed';
  const carried = placements[placement];
  if (!carried) {
    const asked = typeof block.placement === 'string' ? block.placement : JSON.stringify(block.placement);
    return [violation('configuration_unsupported', `${label}.placement: ${asked} is not ${withArticle(platform)} placement; use ${orWords(Object.keys(placements))}`)];
  }
  for (const [option, value] of Object.entries(block)) {
    if (!carried.includes(option)) {
      const where = Object.keys(placements).filter((p) => placements[p].includes(option));
      const hint = where.length ? `; it applies to ${listWords(where.map((p) => placementPhrase(platform, p)))}` : '';
      const what = where.length ? `is not carried by ${placementPhrase(platform, placement)}` : `is not ${withArticle(platform)} option`;
      return [violation('configuration_unsupported', `${label}.${option} ${what}${hint}`)];
    }
    const type = optionTypes[option];
    if (type && !type.schema.safeParse(value).success) {
      return [violation('bad_request', `${label}.${option}: must be ${type.expect}`)];
    }
  }
  return [];
}

/** A story or reel carries no text and no first comment (publishing-api.md "Publishing options" 4, first comment rule 5). */
export function checkSinglePostContent(platform: PlatformSlug, block: ConfigurationBlock | null, content: { text: string; firstComment: string | null }): Violation[] {
  const placement = placementOf(platform, block);
  if (!isSinglePostPlacement(placement)) return [];
  const what = placementPhrase(platform, placement);
  if (content.text !== '') {
    return [violation('configuration_unsupported', `${what} carries no text; send text as an empty string`)];
  }
  if (content.firstComment !== null) {
    return [violation('configuration_unsupported', `${what} carries no first comment; leave first_comment out`)];
  }
  return [];
}

/** A thread is a series of posts; a story or reel is a single one. */
export function checkThreadPlacement(platform: PlatformSlug, block: ConfigurationBlock | null): Violation[] {
  const placement = placementOf(platform, block);
  if (!isSinglePostPlacement(placement)) return [];
  return [violation('configuration_unsupported', `A thread cannot be published as ${placementPhrase(platform, placement)}; stories and reels are single posts`)];
}
