import assert from 'node:assert/strict';
import fc from 'fast-check';
import { emojiFinder } from '../../src/posts/rules/emoji';
import { emojiPatternBefore, spansOf } from './text-rules-before';

/** The pattern the finder is given, counting the texts it runs over. */
function countingPattern(): { pattern: RegExp; runs: string[] } {
  const runs: string[] = [];
  class Counting extends RegExp {
    override [Symbol.matchAll](text: string) {
      runs.push(text);
      return super[Symbol.matchAll](text);
    }
  }
  return { pattern: new Counting('\\p{RGI_Emoji}', 'gv'), runs };
}


describe('posts rules: emoji, found without running the emoji pattern on every text (issue 15)', () => {
  it('finds what the pattern finds over the whole text, on any text of words, marks, emoji, flags, keycaps and sequences', () => {
    // Regional indicators only as whole flags: an odd run is the one place the two differ (src/posts/rules/emoji.ts).
    const pieces = fc.constantFrom(
      ...['a', 'Hello', ' ', '.', 'é', 'e\u0301', '日本', '한', 'привет', '𝕏', '©', '®', '‼', '#', '1', '\u2013', '\u201c'],
      ...['👍', '🏽', '👍🏽', '❤', '❤️', '©️', '‼️', '1️⃣', '#️⃣', '\u20e3', '\ufe0f', '\u200d', '👨', '👩', '👧', '👨‍👩‍👧‍👦', '🏳️‍🌈', '🇩🇪', '🇫🇷🇯🇵', '🏴󠁧󠁢󠁥󠁮󠁧󠁿', '🧑‍💻', '😀'],
    );
    const findEmoji = emojiFinder();
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 14 }), (parts) => {
        const text = parts.join('');
        assert.deepEqual(findEmoji(text), spansOf(emojiPatternBefore, text), JSON.stringify(text));
      }),
      { numRuns: 3000 },
    );
  });

  it('every BMP code point that is an emoji alone lies in U+231A..U+2B55 (the rest need U+FE0F, U+20E3, a ZWJ or an astral code point)', () => {
    const alone = new RegExp('^\\p{RGI_Emoji}$', 'v');
    const outside: string[] = [];
    for (let code = 0; code <= 0xffff; code++) {
      if (code >= 0xd800 && code <= 0xdfff) continue;
      if (alone.test(String.fromCharCode(code)) && !(code >= 0x231a && code <= 0x2b55)) outside.push(code.toString(16));
    }
    assert.deepEqual(outside, []);
  });

  it('runs the pattern only on grapheme clusters that can hold an emoji, once per distinct cluster', () => {
    const { pattern, runs } = countingPattern();
    const findEmoji = emojiFinder(pattern);
    assert.deepEqual(findEmoji('Hello, café, привет, 日本語 — “quoted”. 1.2.3'), []);
    assert.deepEqual(runs, [], 'no unit an emoji holds: the pattern never ran');

    assert.deepEqual(findEmoji('ship it 👍 now'), [{ start: 8, end: 10 }]);
    assert.deepEqual(findEmoji('👍👍 and 👍🏽'), [{ start: 0, end: 2 }, { start: 2, end: 4 }, { start: 9, end: 13 }]);
    assert.deepEqual(runs, ['👍', '👍🏽'], 'each distinct cluster once, alone');
    assert.deepEqual(findEmoji('ship it 👍 now'), [{ start: 8, end: 10 }]);
    assert.equal(runs.length, 2, 'a text seen before runs nothing');
  });
});
