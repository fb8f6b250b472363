/**
 * Where a text's emoji are: every RGI emoji (`\p{RGI_Emoji}`: single emoji, skin tones, ZWJ families, flags,
 * keycaps, tag sequences), as UTF-16 offsets, end exclusive.
 *
 * Without running that pattern on every text (issue 15): V8 throws a regular expression's compiled code away when a
 * full garbage collection finds it unused since the previous one, and this one, thousands of sequences, takes 20–56
 * ms to compile again (`npm run bench:text-rules`), which a quiet client's next post paid on the API's thread. The
 * pattern runs only on what can hold an emoji, once per distinct piece, and what it found is remembered:
 * - a text can hold an emoji only where it has one of a few UTF-16 units (`isEmojiUnit`): every RGI emoji is either
 *   an emoji-presentation code point (in the BMP U+231A to U+2B55, the rest astral) or a sequence holding U+FE0F,
 *   U+20E3, a ZWJ or an astral code point (skin tones, regional indicators, tags), so most texts, CJK included,
 *   never reach the pattern;
 * - an RGI emoji is one grapheme cluster, so the pattern runs on each cluster holding such a unit, alone, and the
 *   emoji it found in that cluster are kept by the cluster (`maxRemembered`, then forgotten all at once: a
 *   cluster is a few code units, and the emoji people write are a few hundred).
 * The one difference from running the pattern over the whole text: a run of regional indicators is paired as
 * grapheme clusters pair them, from its start; a flag straddling two of those pairs (an odd run whose first pair
 * is no flag) is not found.
 */
import { forEachCluster } from './graphemes';

type Span = readonly [start: number, end: number];

const maxRemembered = 1024;
/** Clusters asked for one at a time before the rest of a text is segmented in chunks (`forEachCluster`). */
const containingCalls = 32;
const noSpans: readonly Span[] = [];

/** A unit found in every RGI emoji (test/posts-rules/emoji.test.ts checks the BMP's single code points). */
function isEmojiUnit(unit: number): boolean {
  return unit === 0xfe0f || unit === 0x20e3 || unit === 0x200d || (unit >= 0x231a && unit <= 0x2b55) || (unit >= 0xd800 && unit <= 0xdbff);
}

/**
 * `pattern`: a global `\p{RGI_Emoji}` pattern (a test passes one that counts its runs). Built at run time:
 * TypeScript refuses the `v` flag below an ES2024 target; Node 20 supports it.
 */
export function emojiFinder(pattern: RegExp = new RegExp('\\p{RGI_Emoji}', 'gv')): (text: string) => Array<{ start: number; end: number }> {
  const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });
  const spansByCluster = new Map<string, readonly Span[]>();

  function spansIn(cluster: string): readonly Span[] {
    let spans = spansByCluster.get(cluster);
    if (spans === undefined) {
      const found = [...cluster.matchAll(pattern)].map((m): Span => [m.index, m.index + m[0].length]);
      spans = found.length === 0 ? noSpans : found;
      if (spansByCluster.size >= maxRemembered) spansByCluster.clear();
      spansByCluster.set(cluster, spans);
    }
    return spans;
  }

  // Only the clusters around such units are asked for (`containing`), while they are few: each answer of
  // `containing` copies the whole text (`graphemes.ts`), so a text of thousands of emoji took minutes (64,000 in one
  // text: 88 s). Past `containingCalls`, the rest of the text is segmented in chunks from the last cluster's end.
  return (text) => {
    const emoji: Array<{ start: number; end: number }> = [];
    const found = (cluster: string, index: number) => {
      for (const [start, end] of spansIn(cluster)) emoji.push({ start: index + start, end: index + end });
    };
    let segments: Intl.Segments | undefined;
    let calls = 0;
    // The end of the last cluster found: a true boundary to go on from.
    let boundary = 0;
    for (let i = 0; i < text.length; i++) {
      if (!isEmojiUnit(text.charCodeAt(i))) continue;
      if (calls === containingCalls) {
        forEachCluster(text, boundary, (start, end) => {
          for (let unit = start; unit < end; unit++) {
            if (isEmojiUnit(text.charCodeAt(unit))) return void found(text.slice(start, end), start);
          }
        });
        return emoji;
      }
      calls += 1;
      const { segment, index } = (segments ??= graphemes.segment(text)).containing(i)!;
      found(segment, index);
      i = index + segment.length - 1;
      boundary = index + segment.length;
    }
    return emoji;
  };
}
