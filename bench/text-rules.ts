// What a post's text rules cost on the API's thread (issue 15), before and after the emoji and link patterns stopped
// running on every text: V8 throws a regular expression's compiled code away when a full GC finds it unused since the
// previous one, and the emoji pattern (`\p{RGI_Emoji}`, thousands of sequences) took 20–56 ms to compile again, the
// link pattern 6–9 ms, paid by a quiet client's next post. Times, for texts of five kinds, the X weight and the link
// extraction:
//   - "before": the patterns as they were, over the whole text (test/posts-rules/text-rules-before.ts);
//   - "now": `xWeightedLength` and `extractLinks` as Herald runs them (src/posts/rules/emoji.ts, links.ts);
// each right after full GCs (median of ROUNDS, two GCs before each: a pattern not run since the previous full GC
// loses its code, as between two posts of a running process) and warm (µs a call over 20,000 fresh texts, or as many
// as 2 s allow).
// Usage: node <out>/bench/text-rules.js [rounds=9]. Prints a table; compare within one run.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { extractLinks } from '../src/posts/rules/links';
import { xWeightedLength, xWeightedLengthWith } from '../src/posts/rules/x-weighted-length';
import { emojiPatternBefore, linkPatternBefore, spansOf } from '../test/posts-rules/text-rules-before';
import { percentile } from './percentile';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const ROUNDS = Number(process.argv[2] ?? 9);

/** The weight as it was: both patterns over the whole text (the link filtering and trimming left out: the same code now). */
const weightBefore = xWeightedLengthWith((text) => spansOf(emojiPatternBefore, text), (text) => spansOf(linkPatternBefore, text));
/** A create runs both: the weight (x) and the link charge, each over the text; as it was, and as it is. */
const before = (text: string) => weightBefore(text) + [...text.matchAll(linkPatternBefore)].length;
const now = (text: string) => xWeightedLength(text) + extractLinks(text).length;

const kinds: Record<string, (i: number) => string> = {
  'plain (ASCII, sentences)': (i) => `Shipping release ${i} today. Thanks, everyone!`,
  'a link': (i) => `Release notes for ${i}: https://example.com/releases/${i}`,
  'emoji': (i) => `We did it 🎉🚀 round ${i} 👍🏽`,
  'CJK': (i) => `今日は新しいリリース${i}です。よろしく`,
  'long, with emoji (~24,000 characters, x premium)': (i) => `Post ${i}: ${'Long post with emoji 🎉 and more text here. '.repeat(550)}`,
};

function afterGcMs(run: (text: string) => number, make: (i: number) => string): number {
  const times: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    // Two: V8 throws away the code of a pattern not run since the previous full GC, as a process between two posts.
    gc();
    gc();
    const text = make(round);
    const started = process.hrtime.bigint();
    run(text);
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return percentile(times.sort((a, b) => a - b), 50);
}

function warmUs(run: (text: string) => number, make: (i: number) => string): number {
  for (let i = 0; i < 200; i++) run(make(i));
  const started = process.hrtime.bigint();
  let calls = 0;
  while (calls < 20_000 && process.hrtime.bigint() - started < 2_000_000_000n) run(make(10_000 + calls++));
  return Number(process.hrtime.bigint() - started) / 1e3 / calls;
}

console.log('| Text | before: after a full GC, ms | now: after a full GC, ms | before: warm, µs | now: warm, µs |');
console.log('|---|---|---|---|---|');
for (const [kind, make] of Object.entries(kinds)) {
  for (let i = 0; i < 50; i++) {
    // the emoji found are remembered by cluster, as a running process has them
    if (now(make(i)) !== before(make(i))) throw new Error(`before and now disagree on ${JSON.stringify(make(i))}`);
  }
  const row = [afterGcMs(before, make), afterGcMs(now, make), warmUs(before, make), warmUs(now, make)];
  console.log(`| ${kind} | ${row.map((v, i) => v.toFixed(i < 2 ? 2 : 1)).join(' | ')} |`);
}
