import { countryTlds, genericTlds, specialShortCountryTlds } from '../../src/posts/rules/tlds';

/**
 * The text rules' patterns as they were before they stopped running on every text (so that V8 compiling them again
 * after a full GC costs nothing or less, issue 15): the oracles the current ones must agree with
 * (`links.test.ts`, `emoji.test.ts`) and the baseline of `bench/text-rules.ts`.
 */

/** The link pattern before it lost its `i` flag (its scheme now spelled in both cases). */
export const linkPatternBefore = new RegExp(
  String.raw`(?<![\p{L}\p{N}\p{M}@＠#＃$_./-])(?<scheme>https?:\/\/)?` +
    String.raw`(?<host>\d{1,3}(?:\.\d{1,3}){3}|(?:[\p{L}\p{N}](?:[\p{L}\p{N}\p{M}_-]*[\p{L}\p{N}\p{M}])?\.)+(?<tld>\p{L}{2,63}))` +
    String.raw`(?![\p{L}\p{N}\p{M}_-])(?<port>:\d{1,5})?(?<rest>[/?#][^\s]*)?`,
  'giu',
);

/** The emoji pattern, run over the whole text as it was. */
export const emojiPatternBefore = new RegExp('\\p{RGI_Emoji}', 'gv');

/** Every match of a pattern over the whole text, as offsets. */
export function spansOf(pattern: RegExp, text: string): Array<{ start: number; end: number }> {
  return [...text.matchAll(pattern)].map((m) => ({ start: m.index, end: m.index + m[0].length }));
}

/** The link extraction as it was: `linkPatternBefore` over the whole text, then the same trimming and filtering. */
export function linksAsBefore(text: string): Array<{ url: string; start: number; end: number; hasScheme: boolean }> {
  const trim = (url: string) => {
    let out = url;
    while (out.length > 0 && !/[\p{L}\p{N}\p{M}=_#/+\-&]$/u.test(out)) {
      if (out.endsWith(')') && out.split('(').length >= out.split(')').length) break;
      out = out.slice(0, -1);
    }
    return out;
  };
  const links = [];
  for (const match of text.matchAll(linkPatternBefore)) {
    const { scheme, host = '', tld, port } = match.groups ?? {};
    const url = trim(match[0]);
    const hasPath = url.length > (scheme ?? '').length + host.length + (port ?? '').length;
    if (scheme === undefined) {
      if (tld === undefined || !/^[a-z0-9._-]+$/i.test(host)) continue;
      const lower = tld.toLowerCase();
      const isCountry = countryTlds.has(lower);
      if (!isCountry && !genericTlds.has(lower)) continue;
      if (isCountry && host.split('.').length === 2 && !hasPath && !specialShortCountryTlds.has(lower)) continue;
    }
    links.push({ url, start: match.index, end: match.index + url.length, hasScheme: scheme !== undefined });
  }
  return links;
}
