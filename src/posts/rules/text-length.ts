import { capabilities, DRAFT_MAX_CHARS, textCounting, type TextCounting } from '../../platforms/capabilities';
import type { PlatformSlug } from '../../platforms/types';
import { graphemeCount } from './graphemes';
import { extractLinks } from './links';
import type { RuleAccount } from './inputs';
import { lastTextMemo } from './last-text-memo';
import { threadsLength } from './threads-length';
import { formatCount, violation, type Violation } from './violation';
import { xWeightedLength } from './x-weighted-length';

/** A mention with its server (`@alice@example.com`), as Mastodon's `Account::MENTION_RE` finds it; group 1 is `@alice`. */
const remoteMention = /(?<![=/\p{L}\p{N}_])(@[A-Za-z0-9_]+(?:[.-]+[A-Za-z0-9_]+)*)@[\p{L}\p{N}_]+(?:[.-]+[\p{L}\p{N}_]+)*/gu;

/** Mastodon's count: each http(s) link as 23 characters, then each remote mention as its username, in grapheme clusters. */
function mastodonLength(text: string): number {
  let countable = '';
  let from = 0;
  for (const link of extractLinks(text)) {
    if (!link.hasScheme) continue;
    countable += text.slice(from, link.start) + 'x'.repeat(23);
    from = link.end;
  }
  countable += text.slice(from);
  if (countable.includes('@')) countable = countable.replace(remoteMention, '$1');
  return graphemeCount(countable);
}

const counters: Readonly<Record<TextCounting, (text: string) => number>> = {
  x_weighted: lastTextMemo(xWeightedLength),
  graphemes: lastTextMemo(graphemeCount),
  code_points: lastTextMemo((text) => [...text].length),
  utf16: (text) => text.length,
  code_points_emoji_utf8: lastTextMemo(threadsLength),
  mastodon: lastTextMemo(mastodonLength),
};

/** Length of `text` as `platform` counts it (see `textCounting` in the capability table). */
export function textLength(platform: PlatformSlug, text: string): number {
  return counters[textCounting[platform]](text);
}

const unitName: Readonly<Record<TextCounting, string>> = {
  x_weighted: 'characters as X counts them (links 23, emoji and CJK 2)',
  graphemes: 'characters',
  code_points: 'characters',
  utf16: 'characters',
  mastodon: 'characters (links count 23)',
  code_points_emoji_utf8: 'characters as Threads counts them (emoji count their UTF-8 bytes)',
};

/** The account's own post limit: x premium 25,000, telegram 1,024 when the post carries media. */
function textLimit(account: Pick<RuleAccount, 'platform' | 'premium'>, hasMedia: boolean): number {
  const caps = capabilities[account.platform];
  if (account.premium && caps.maxCharsPremium !== undefined) return caps.maxCharsPremium;
  if (hasMedia && caps.maxCharsWithMedia !== undefined) return caps.maxCharsWithMedia;
  return caps.maxChars;
}

function limitPhrase(account: Pick<RuleAccount, 'platform' | 'premium'>, hasMedia: boolean): string {
  const caps = capabilities[account.platform];
  if (account.premium && caps.maxCharsPremium !== undefined) return `${account.platform} premium accounts allow`;
  if (hasMedia && caps.maxCharsWithMedia !== undefined) return `${account.platform} allows, when the post carries media,`;
  return `${account.platform} allows`;
}

/**
 * `field` names what is measured in the message (`text`, `posts[1].text`, `first_comment`).
 * Message: `text is 281 characters as X counts them (...); x allows 280`. Where the platform also caps the UTF-8
 * bytes (bluesky): `text is 3,025 bytes in UTF-8; bluesky allows 3,000 bytes`. Where it caps the links (threads):
 * `text has 6 different links; threads allows 5 in a post`.
 */
export function checkTextLength(
  account: Pick<RuleAccount, 'platform' | 'premium'>,
  text: string,
  options: { field: string; hasMedia: boolean },
): Violation | null {
  const length = textLength(account.platform, text);
  const limit = textLimit(account, options.hasMedia);
  if (length > limit) {
    const unit = unitName[textCounting[account.platform]];
    return violation(
      'bad_request',
      `${options.field} is ${formatCount(length)} ${unit}; ${limitPhrase(account, options.hasMedia)} ${formatCount(limit)}`,
    );
  }
  const maxBytes = capabilities[account.platform].maxTextBytes;
  const bytes = maxBytes === undefined ? 0 : Buffer.byteLength(text, 'utf8');
  if (maxBytes !== undefined && bytes > maxBytes) {
    return violation('bad_request', `${options.field} is ${formatCount(bytes)} bytes in UTF-8; ${account.platform} allows ${formatCount(maxBytes)} bytes`);
  }
  return checkLinkCount(account.platform, text, options.field);
}

/**
 * Threads fails the container of a text with more than 5 different links ("All unique URLs found in the text field
 * are counted"), bare domains included; links are found as X finds them (`links.ts`), the one extraction Herald has.
 */
function checkLinkCount(platform: PlatformSlug, text: string, field: string): Violation | null {
  const max = capabilities[platform].maxLinks;
  if (max === undefined) return null;
  const links = new Set(extractLinks(text).map((link) => link.url)).size;
  if (links <= max) return null;
  return violation('bad_request', `${field} has ${formatCount(links)} different links; ${platform} allows ${formatCount(max)} in a post`);
}

/** Drafts: any platform, 25,000 characters (code points); refused even in a draft. */
export function checkDraftTextLength(text: string, field: string): Violation | null {
  const length = [...text].length;
  if (length <= DRAFT_MAX_CHARS) return null;
  return violation('bad_request', `${field} is ${formatCount(length)} characters; a draft allows ${formatCount(DRAFT_MAX_CHARS)}`);
}
