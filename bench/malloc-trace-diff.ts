// Compares two dumps of bench/malloc-trace/malloc-trace.c (issue 15): the stacks whose live sampled bytes grew most
// between them, each frame named. Frames in a shared object with a symbol table are named by addr2line (sdk-core's
// index.node keeps one; dladdr sees only exported symbols), paths and generic parameters cut out.
// Usage: node dist/bench/malloc-trace-diff.js before.txt after.txt [stacks=12]
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

interface StackTotal {
  bytes: number;
  blocks: number;
}

function parse(file: string): Map<string, StackTotal> {
  const stacks = new Map<string, StackTotal>();
  for (const group of readFileSync(file, 'utf8').split('\n== ').slice(1)) {
    const [header, ...frames] = group.trimEnd().split('\n');
    const match = /^(\d+) bytes .* in (\d+) blocks/.exec(header!);
    if (!match) continue;
    // Addresses differ between processes (ASLR); a frame's object and offset do not.
    const key = frames.map((frame) => frame.trim().replace(/^0x[0-9a-f]+ /, '')).join('\n');
    stacks.set(key, { bytes: Number(match[1]), blocks: Number(match[2]) });
  }
  return stacks;
}

/** `<a::b::Type<c::D>>::method` → `<Type>::method`: the type a method belongs to, without paths or parameters. */
function shortName(name: string): string {
  let out = '';
  let depth = 0;
  for (const ch of name) {
    if (ch === '<') depth++;
    if (depth <= 1) out += ch;
    if (ch === '>') depth--;
  }
  return out.replace(/(?:\w+::)+(\w+)/g, '$1');
}

function named(frame: string): string {
  const match = /\((\/\S+) \+0x([0-9a-f]+)\)$/.exec(frame);
  if (!match || !frame.startsWith('?')) return frame;
  try {
    const name = execFileSync('addr2line', ['-f', '-C', '-e', match[1]!, `0x${match[2]}`], { encoding: 'utf8' }).split('\n')[0]!;
    return name === '??' ? frame : `${shortName(name)} (${match[1]!.split('/').pop()})`;
  } catch {
    return frame;
  }
}

const [beforeFile, afterFile, count = '12'] = process.argv.slice(2);
if (!beforeFile || !afterFile) throw new Error('usage: malloc-trace-diff.js before.txt after.txt [stacks]');
const before = parse(beforeFile);
const after = parse(afterFile);
const grown = [...new Set([...before.keys(), ...after.keys()])]
  .map((key) => ({ key, bytes: (after.get(key)?.bytes ?? 0) - (before.get(key)?.bytes ?? 0), blocks: (after.get(key)?.blocks ?? 0) - (before.get(key)?.blocks ?? 0) }))
  .sort((a, b) => b.bytes - a.bytes);
console.log(`live sampled bytes grew by ${(grown.reduce((total, g) => total + g.bytes, 0) / 1048576).toFixed(2)} MiB (stacks in the top 60 of each dump)`);
for (const { key, bytes, blocks } of grown.slice(0, Number(count))) {
  console.log(`\n+${(bytes / 1048576).toFixed(2)} MiB in ${blocks} more blocks`);
  for (const frame of key.split('\n').slice(0, 12)) console.log(`    ${named(frame).slice(0, 160)}`);
}
