import assert from 'node:assert/strict';
import { forEachCluster, graphemeCount } from '../../src/posts/rules/graphemes';
import { textLength } from '../../src/posts/rules/text-length';

const segmenter = new Intl.Segmenter('en', { granularity: 'grapheme' });
const whole = (text: string) => [...segmenter.segment(text)].map(({ index, segment }) => [index, index + segment.length]);
function chunked(text: string, chunkUnits: number): number[][] {
  const out: number[][] = [];
  forEachCluster(text, 0, (start, end) => void out.push([start, end]), chunkUnits);
  return out;
}

const msOf = (run: () => void) => {
  const started = process.hrtime.bigint();
  run();
  return Number(process.hrtime.bigint() - started) / 1e6;
};

describe('posts rules: grapheme clusters a chunk at a time', () => {
  it('the same clusters as segmenting the whole text, whatever the chunk: flags, families, keycaps, Hangul, CR LF, marks, lone surrogates', () => {
    const tricky = ['🇫🇷🇩🇪🇺🇸🇬🇧🇫', '👨‍👩‍👧‍👦'.repeat(20), 'e\u0301'.repeat(100), `a${'\u0301'.repeat(600)}b`, '\r\n'.repeat(50), 'क्‍ष'.repeat(40), '#️⃣'.repeat(40), '🇫'.repeat(101), '\u1100\u1161\u11a8'.repeat(40), '\u0600a\ud83d🏽'];
    for (const text of tricky) for (const size of [1, 2, 3, 7, 64, 256]) assert.deepEqual(chunked(text, size), whole(text), `${JSON.stringify(text.slice(0, 12))} in chunks of ${size}`);
    const pool = ['a', ' ', '\r', '\n', '\u0301', '\u200d', '👍', '🏽', '🇫', '🇷', '\ufe0f', '\u20e3', '#', '👨', 'क', '्', 'ष', '\u1100', '\u1161', '\u11a8', '\u0600', 'é', '字', '\ud83d'];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % pool.length;
    for (let k = 0; k < 500; k++) {
      const text = Array.from({ length: k % 60 }, () => pool[next()]).join('');
      for (const size of [2, 5, 16]) assert.deepEqual(chunked(text, size), whole(text), JSON.stringify(text));
    }
  });

  it('counts ASCII without the segmenter, CR LF as one', () => {
    assert.equal(graphemeCount('a\r\nb\n\rc'), 6);
    assert.equal(graphemeCount('👨‍👩‍👧‍👦é'), 2);
  });

  it('a long text costs time in proportion to its length (V8 copies the text into every segment: quadratic, and 200,000 clusters ran the heap out)', () => {
    // Before: bluesky's 40,000 characters took seconds and x's 40,000 emoji tens of seconds; now tens of milliseconds.
    const accented = 'é'.repeat(40_000);
    assert.ok(msOf(() => assert.equal(textLength('bluesky', accented), 40_000)) < 1_500);
    assert.ok(msOf(() => assert.equal(textLength('mastodon', `${accented}!`), 40_001)) < 1_500);
    const thumbs = '👍'.repeat(40_000);
    assert.ok(msOf(() => assert.equal(textLength('x', thumbs), 80_000)) < 1_500);
    assert.ok(msOf(() => assert.equal(textLength('threads', `${thumbs}!`), 160_001)) < 1_500);
  });
});
