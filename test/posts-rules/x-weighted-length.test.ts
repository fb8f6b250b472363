import assert from 'node:assert/strict';
import { xWeightedLength } from '../../src/posts/rules/x-weighted-length';

describe('posts rules: X weighted length (twitter-text v3)', () => {
  const cases: Array<[string, string, number]> = [
    ['empty', '', 0],
    ['ASCII counts 1 each', 'hello', 5],
    ['Latin-1 and Latin Extended count 1', 'café ñ ü', 8],
    ['Cyrillic and Greek (below U+10FF) count 1', 'привет αβγ', 10],
    ['general punctuation ranges count 1 (en dash, curly quotes, prime)', '\u2013\u201c\u201d\u2032', 4],
    ['CJK counts 2 each', '日本語', 6],
    ['Hangul counts 2', '한국', 4],
    ['a simple emoji counts 2', '👍', 2],
    ['an emoji with a skin tone counts 2', '👍🏽', 2],
    ['a ZWJ family counts 2', '👨‍👩‍👧‍👦', 2],
    ['a flag counts 2', '🇩🇪', 2],
    ['a keycap counts 2', '1️⃣', 2],
    ['an astral non-emoji letter counts 2', '𝕏', 2],
    ['a URL counts 23 however long', 'https://example.com/a/very/long/path/that/goes/on/and/on', 23],
    ['a short URL counts 23', 'x.co', 23],
    ['a bare domain counts 23', 'read example.com', 5 + 23],
    ['text, URL and emoji together', 'hi 👋 https://example.com 日本', 3 + 2 + 1 + 23 + 1 + 4],
    ['decomposed accents are normalised (NFC) first', 'e\u0301', 1],
  ];
  for (const [name, text, weight] of cases) {
    it(`${name}: ${weight}`, () => assert.equal(xWeightedLength(text), weight));
  }

  it('280 ASCII characters weigh 280; 140 CJK characters weigh 280', () => {
    assert.equal(xWeightedLength('a'.repeat(280)), 280);
    assert.equal(xWeightedLength('字'.repeat(140)), 280);
    assert.equal(xWeightedLength('字'.repeat(141)), 282);
  });
});
