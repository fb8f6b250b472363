import { emojiFinder } from './emoji';
import { extractLinks } from './links';

/**
 * X's weighted length (twitter-text configuration v3): the text is NFC-normalised; every link counts 23; every emoji
 * (a whole sequence: skin tones, ZWJ families, flags, keycaps) counts 2; any other code point counts 1 when it falls
 * in one of the ranges below and 2 otherwise (CJK, most non-Latin scripts beyond U+10FF, astral characters).
 */
const scale = 100;
const defaultWeight = 200;
const transformedUrlLength = 23;
const ranges: ReadonlyArray<{ start: number; end: number; weight: number }> = [
  { start: 0x0000, end: 0x10ff, weight: 100 },
  { start: 0x2000, end: 0x200d, weight: 100 },
  { start: 0x2010, end: 0x201f, weight: 100 },
  { start: 0x2032, end: 0x2037, weight: 100 },
];

function codePointWeight(codePoint: number): number {
  for (const range of ranges) {
    if (codePoint >= range.start && codePoint <= range.end) return range.weight;
  }
  return defaultWeight;
}

type Spans = (text: string) => ReadonlyArray<{ start: number; end: number }>;

/** The weight with the given ways of finding emoji and links (`bench/text-rules.ts` weighs with the patterns as they were). */
export function xWeightedLengthWith(findEmoji: Spans, findLinks: Spans): (text: string) => number {
  return (text) => {
    const normalized = text.normalize('NFC');
    // Entities by start offset; links win over emoji where both start at the same place.
    const entityEnd = new Map<number, { end: number; weight: number }>();
    for (const emoji of findEmoji(normalized)) entityEnd.set(emoji.start, { end: emoji.end, weight: defaultWeight });
    for (const link of findLinks(normalized)) entityEnd.set(link.start, { end: link.end, weight: transformedUrlLength * scale });
    let weighted = 0;
    let index = 0;
    while (index < normalized.length) {
      const entity = entityEnd.get(index);
      if (entity) {
        weighted += entity.weight;
        index = entity.end;
        continue;
      }
      const codePoint = normalized.codePointAt(index) ?? 0;
      weighted += codePointWeight(codePoint);
      index += codePoint > 0xffff ? 2 : 1;
    }
    return Math.ceil(weighted / scale);
  };
}

export const xWeightedLength = xWeightedLengthWith(emojiFinder(), extractLinks);
