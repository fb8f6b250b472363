import { platformSlugs, type PlatformSlug } from '../../platforms/types';
import type { AccountBody, AccountThreadBody, ConfigurationBlock, MediaRef, MediaSelection, RuleAccount, ThreadPartBody } from './inputs';
import type { CreatePostBody, CreateThreadBody } from './request-schemas';

/**
 * What each account of a request publishes (publishing-api.md `account_configurations`): an entry's `text` replaces
 * the top-level text; its `first_comment` replaces the top-level one (empty string = none); its `configuration`
 * replaces the whole block for that account; its media (any spelling, `[]` included) replaces the top-level media,
 * never merging with it. Call after the structure rules have passed (at most one media spelling per level).
 */

interface MediaLevel {
  media?: Array<{ id?: string; url?: string; alt?: string }>;
  media_ids?: string[];
  media_urls?: string[];
}

/** The media a level names, normalised to `MediaRef`s; null when the level names none. */
export function mediaSelectionOf(level: MediaLevel): MediaSelection | null {
  if (level.media !== undefined) {
    return {
      spelling: 'media',
      items: level.media.map((entry) => {
        const alt = entry.alt === undefined ? {} : { alt: entry.alt };
        return entry.id !== undefined ? { id: entry.id, ...alt } : { url: entry.url ?? '', ...alt };
      }),
    };
  }
  if (level.media_ids !== undefined) return { spelling: 'media_ids', items: level.media_ids.map((id) => ({ id })) };
  if (level.media_urls !== undefined) return { spelling: 'media_urls', items: level.media_urls.map((url) => ({ url })) };
  return null;
}

function overrideFor<T>(entries: Record<string, T> | undefined, accountId: string): T | undefined {
  if (!entries) return undefined;
  const key = Object.keys(entries).find((k) => k.toLowerCase() === accountId.toLowerCase());
  return key === undefined ? undefined : entries[key];
}

function firstCommentOf(text: string | undefined): string | null {
  return text === undefined || text === '' ? null : text;
}

/**
 * A per-account `configuration` is the block of the account's platform (`{ "placement": "story" }`). The keyed form
 * `{ "instagram": { ... } }` is accepted too when it names only the account's own platform.
 */
export function accountBlock(configuration: Record<string, unknown>, platform: PlatformSlug): ConfigurationBlock {
  const keys = Object.keys(configuration);
  const inner = configuration[platform];
  if (keys.length === 1 && keys[0] === platform && typeof inner === 'object' && inner !== null && !Array.isArray(inner)) {
    return inner as ConfigurationBlock;
  }
  return configuration;
}

export function isPlatformSlug(value: string): value is PlatformSlug {
  return (platformSlugs as readonly string[]).includes(value);
}

function blockFor(
  account: Pick<RuleAccount, 'id' | 'platform'>,
  top: Record<string, Record<string, unknown>> | undefined,
  override: Record<string, unknown> | undefined,
): ConfigurationBlock | null {
  if (override !== undefined) return Object.keys(override).length === 0 ? null : accountBlock(override, account.platform);
  return top?.[account.platform] ?? null;
}

export function resolveAccountBody(body: CreatePostBody, account: Pick<RuleAccount, 'id' | 'platform'>): AccountBody {
  const override = overrideFor(body.account_configurations, account.id);
  const media = (override && mediaSelectionOf(override)) ?? mediaSelectionOf(body);
  return {
    accountId: account.id,
    text: override?.text ?? body.text ?? '',
    media: media?.items ?? [],
    mediaSpelling: media?.spelling ?? null,
    firstComment: firstCommentOf(override?.first_comment ?? body.first_comment),
    configuration: blockFor(account, body.configuration, override?.configuration),
  };
}

function resolveThreadPart(part: CreateThreadBody['posts'][number]): ThreadPartBody {
  const media = mediaSelectionOf(part);
  return { text: part.text ?? '', media: media?.items ?? [], mediaSpelling: media?.spelling ?? null };
}

export function resolveAccountThread(body: CreateThreadBody, account: Pick<RuleAccount, 'id' | 'platform'>): AccountThreadBody {
  const override = overrideFor(body.account_configurations, account.id);
  return {
    accountId: account.id,
    parts: body.posts.map(resolveThreadPart),
    firstComment: firstCommentOf(override?.first_comment ?? body.first_comment),
    configuration: blockFor(account, body.configuration, override?.configuration),
  };
}

/** Lets `MediaRef` consumers tell the two kinds apart without casts. */
export function isUploadRef(ref: MediaRef): ref is { id: string; alt?: string } {
  return 'id' in ref;
}
