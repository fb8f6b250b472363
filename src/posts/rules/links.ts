import { lastTextMemo } from './last-text-memo';
import { countryTlds, genericTlds, specialShortCountryTlds } from './tlds';

/**
 * Links as X sees them (twitter-text's URL extraction, reduced to what Herald needs): used both to weigh text
 * (every link counts 23) and to decide the x link-post charge. One implementation, so the two never disagree.
 *
 * - `http://` / `https://` followed by a host: always a link (any dotted host whose last label is letters, or an
 *   IPv4 address).
 * - A bare domain: ASCII labels ending in a known TLD; not preceded by a letter, digit, `@`, `#`, `$`, `.`, `/`,
 *   `-` or `_` (so e-mail addresses, hashtags and file paths are not links); a `name.<country code>` with no path is
 *   not a link (`readme.md`, `config.py`), except `.co` and `.tv`, exactly as X does.
 */
interface LinkEntity {
  url: string;
  /** UTF-16 offsets, end exclusive. */
  start: number;
  end: number;
  hasScheme: boolean;
}

// Case-insensitive only in its scheme, spelled out: the `i` flag would fold the case of every `\p{L}` class, which
// doubled what V8 compiles each time a full GC has thrown the compiled pattern away (~2 ms instead of ~4.5; the
// classes already hold both cases).
const linkPattern = new RegExp(
  String.raw`(?<![\p{L}\p{N}\p{M}@＠#＃$_./-])` +
    String.raw`(?<scheme>[hH][tT][tT][pP][sS]?:\/\/)?` +
    String.raw`(?<host>\d{1,3}(?:\.\d{1,3}){3}|(?:[\p{L}\p{N}](?:[\p{L}\p{N}\p{M}_-]*[\p{L}\p{N}\p{M}])?\.)+(?<tld>\p{L}{2,63}))` +
    String.raw`(?![\p{L}\p{N}\p{M}_-])` +
    String.raw`(?<port>:\d{1,5})?` +
    String.raw`(?<rest>[/?#][^\s]*)?`,
  'gu',
);

/**
 * A link ends in a letter, digit, or one of `= _ # / + - &` (twitter-text's path and query ending characters), or in
 * a `)` that closes a `(` inside it (Wikipedia-style paths); anything else at the end is sentence punctuation.
 */
const validEnding = /[\p{L}\p{N}\p{M}=_#/+\-&]$/u;

function trimTrailing(url: string): string {
  let out = url;
  while (out.length > 0 && !validEnding.test(out)) {
    if (out.endsWith(')') && count(out, '(') >= count(out, ')')) break;
    out = out.slice(0, -1);
  }
  return out;
}

function count(s: string, ch: string): number {
  return s.split(ch).length - 1;
}

function isLinkedBareDomain(host: string, tld: string, hasPath: boolean): boolean {
  if (!/^[a-z0-9._-]+$/i.test(host)) return false;
  const lowerTld = tld.toLowerCase();
  const isCountry = countryTlds.has(lowerTld);
  if (!isCountry && !genericTlds.has(lowerTld)) return false;
  const labels = host.split('.').length;
  if (isCountry && labels === 2 && !hasPath && !specialShortCountryTlds.has(lowerTld)) return false;
  return true;
}

/**
 * Whether `text` may hold a link, without the pattern (compiled again after every full GC): a host has a dot
 * followed by the first character of a label or of the TLD, a letter or digit; an ASCII dot followed by anything
 * else, or no dot at all, holds none. A non-ASCII character after a dot may be a letter: the pattern decides.
 */
function mayHoldLink(text: string): boolean {
  for (let dot = text.indexOf('.'); dot !== -1; dot = text.indexOf('.', dot + 1)) {
    const next = text.charCodeAt(dot + 1);
    if (next >= 0x80 || (next >= 0x30 && next <= 0x39) || (next >= 0x41 && next <= 0x5a) || (next >= 0x61 && next <= 0x7a)) return true;
  }
  return false;
}

function findLinks(text: string): readonly LinkEntity[] {
  if (!mayHoldLink(text)) return [];
  const links: LinkEntity[] = [];
  for (const match of text.matchAll(linkPattern)) {
    const groups = match.groups ?? {};
    const hasScheme = groups.scheme !== undefined;
    const host = groups.host ?? '';
    const isIp = groups.tld === undefined;
    const url = trimTrailing(match[0]);
    const hasPath = url.length > (groups.scheme ?? '').length + host.length + (groups.port ?? '').length;
    if (!hasScheme && (isIp || !isLinkedBareDomain(host, groups.tld ?? '', hasPath))) continue;
    const start = match.index ?? 0;
    links.push({ url, start, end: start + url.length, hasScheme });
  }
  return links;
}

export const extractLinks = lastTextMemo(findLinks);

export function containsLink(text: string): boolean {
  return extractLinks(text).length > 0;
}
