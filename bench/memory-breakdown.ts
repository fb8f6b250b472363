// Where a node process's memory is (issue 15), for `bench/memory.ts`: the V8 heaps of its threads (from
// `bench/memory-probe.ts`, preloaded into the process) and its mappings by kind from /proc/<pid>/smaps, so that
// "native memory outside V8" is a measured difference, not a guess.
//  - brk heap: glibc's main malloc arena (`[heap]`): the main thread's malloc, V8's own malloc, libuv, OpenSSL.
//  - thread arenas: glibc's per-thread malloc arenas (anonymous, 64 MiB aligned, 64 MiB reserved each): the
//    malloc of sdk-core's Rust threads (tokio), libuv's thread pool, V8's background threads.
//  - other anonymous: mostly V8's heap pages (256 KiB chunks) and allocations large enough to be their own mmap.
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { ProbeAnswer } from './memory-probe';

export interface Mappings {
  brkHeapKiB: number;
  arenaKiB: number;
  arenas: number;
  otherAnonKiB: number;
  fileKiB: number;
}

export interface NodeBreakdown {
  label: string;
  mappings: Mappings;
  probe: ProbeAnswer | null;
}

const ARENA_BYTES = 64 * 1024 * 1024;

interface Vma {
  start: bigint;
  end: bigint;
  perms: string;
  path: string;
  pssKiB: number;
}

function readVmas(pid: number): Vma[] {
  const vmas: Vma[] = [];
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const header = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header) {
      vmas.push({ start: BigInt(`0x${header[1]}`), end: BigInt(`0x${header[2]}`), perms: header[3]!, path: header[4]!, pssKiB: 0 });
      continue;
    }
    const pss = /^Pss:\s+(\d+) kB/.exec(line);
    if (pss && vmas.length) vmas[vmas.length - 1]!.pssKiB = Number(pss[1]);
  }
  return vmas;
}

export function mappingsOf(pid: number): Mappings {
  const vmas = readVmas(pid);
  const result: Mappings = { brkHeapKiB: 0, arenaKiB: 0, arenas: 0, otherAnonKiB: 0, fileKiB: 0 };
  vmas.forEach((vma, i) => {
    if (vma.path === '[heap]') result.brkHeapKiB += vma.pssKiB;
    else if (vma.path.startsWith('/')) result.fileKiB += vma.pssKiB;
    else if (vma.path === '') {
      // A glibc arena: its used part (rw-p) starts 64 MiB aligned and the rest of the 64 MiB follows as ---p.
      const next = vmas[i + 1];
      const reserved = next && next.path === '' && next.perms === '---p' && next.start === vma.end ? next.end : vma.end;
      const isArena = vma.perms === 'rw-p' && vma.start % BigInt(ARENA_BYTES) === 0n && reserved - vma.start === BigInt(ARENA_BYTES);
      if (isArena) {
        result.arenaKiB += vma.pssKiB;
        result.arenas++;
      } else {
        result.otherAnonKiB += vma.pssKiB;
      }
    }
  });
  return result;
}

/** Asks the process's preloaded probe for its threads' heaps; null if it has none or does not answer in 5 s. */
export function probe(child: ChildProcess): Promise<ProbeAnswer | null> {
  if (!child.connected) return Promise.resolve(null);
  return new Promise((resolve) => {
    const timer = setTimeout(() => finish(null), 5000);
    const onMessage = (message: { probeAnswer?: ProbeAnswer }) => message?.probeAnswer && finish(message.probeAnswer);
    const finish = (answer: ProbeAnswer | null) => {
      clearTimeout(timer);
      child.off('message', onMessage);
      resolve(answer);
    };
    child.on('message', onMessage);
    child.send({ probe: true });
  });
}

export async function breakdownOf(label: string, child: ChildProcess): Promise<NodeBreakdown> {
  return { label, mappings: mappingsOf(child.pid!), probe: await probe(child) };
}

const mib = (kib: number) => (kib / 1024).toFixed(1);

function rows(b: NodeBreakdown): Array<[string, number]> {
  const threads = b.probe?.threads ?? [];
  const main = threads.find((t) => t.threadId === 0);
  const others = threads.filter((t) => t.threadId !== 0);
  const sumOf = (key: 'usedKiB' | 'committedKiB' | 'physicalKiB' | 'mallocedKiB') => others.reduce((total, t) => total + t[key], 0);
  const v8Physical = threads.reduce((total, t) => total + t.physicalKiB, 0);
  const anon = b.mappings.brkHeapKiB + b.mappings.arenaKiB + b.mappings.otherAnonKiB;
  return [
    ['main isolate: heap used', main?.usedKiB ?? NaN],
    ['main isolate: heap committed (resident)', main?.physicalKiB ?? NaN],
    ['main isolate: V8 malloc (zones, compiler)', main?.mallocedKiB ?? NaN],
    ...(['new_space', 'old_space', 'large_object_space'] as const).flatMap((space): Array<[string, number]> => [
      [`main isolate: ${space} used`, main?.spaces[space]?.usedKiB ?? NaN],
      [`main isolate: ${space} resident`, main?.spaces[space]?.physicalKiB ?? NaN],
    ]),
    [`worker threads (${others.length}): heap used`, sumOf('usedKiB')],
    [`worker threads (${others.length}): heap committed (resident)`, sumOf('physicalKiB')],
    ['external (ArrayBuffers, Buffers, native objects)', b.probe?.externalKiB ?? NaN],
    ['... of which ArrayBuffers/Buffers', b.probe?.arrayBuffersKiB ?? NaN],
    ['glibc malloc: in use (mallinfo2, all arenas)', b.probe?.malloc?.inUseKiB ?? NaN],
    ['glibc malloc: free inside its heaps', b.probe?.malloc?.freeKiB ?? NaN],
    ['smaps: anonymous PSS, all', anon],
    ['smaps: brk heap (main malloc arena)', b.mappings.brkHeapKiB],
    [`smaps: glibc thread arenas (${b.mappings.arenas})`, b.mappings.arenaKiB],
    ['smaps: other anonymous (V8 pages, large mmaps)', b.mappings.otherAnonKiB],
    ['anonymous outside V8 heaps (anonymous − V8 resident)', anon - v8Physical],
    ['smaps: file-backed PSS', b.mappings.fileKiB],
  ];
}

/** Prints one table: a row per kind, a column per reading (MiB), and each later reading's growth over the first per 1,000 posts. */
export function printBreakdowns(title: string, readings: Array<{ name: string; breakdown: NodeBreakdown }>, posts: number): void {
  if (!readings.length) return;
  const table = readings.map((r) => rows(r.breakdown));
  const later = readings.slice(1).map((r) => `${r.name}: KiB per 1,000 posts`);
  console.log(`\n${title}`);
  console.log(`| Kind | ${[...readings.map((r) => `${r.name} MiB`), ...later].join(' | ')} |`);
  console.log(`|---|${[...readings, ...later].map(() => '---|').join('')}`);
  table[0]!.forEach(([kind], i) => {
    const values = table.map((r) => r[i]![1]);
    const growth = values.slice(1).map((v) => (((v - values[0]!) * 1000) / posts).toFixed(0));
    console.log(`| ${kind} | ${[...values.map(mib), ...growth].join(' | ')} |`);
  });
}
