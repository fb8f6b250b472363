// Preloaded by `bench/memory.ts` into each node process it measures (`node --require memory-probe.js ...`): answers
// a `{ probe: true }` IPC message with the V8 heap of every thread in the process (the main isolate and each worker
// thread's, e.g. the Temporal worker's workflow thread) and the process's own `process.memoryUsage()`. Node runs
// `--require` modules in worker threads too; each thread answers on a BroadcastChannel. Nothing here runs unless the
// bench loads it, and it keeps no thread alive (channels unref'd).
import { createRequire } from 'node:module';
import { BroadcastChannel, isMainThread, threadId } from 'node:worker_threads';
import v8 from 'node:v8';

export interface ThreadHeap {
  threadId: number;
  /** Live objects. */
  usedKiB: number;
  /** Pages V8 holds for the heap (committed). */
  committedKiB: number;
  /** Of the committed pages, those backed by memory. */
  physicalKiB: number;
  /** malloc'd by V8 itself (zones, compiler), outside the heap pages. */
  mallocedKiB: number;
  externalKiB: number;
  /** Used and resident KiB of each heap space (new_space, old_space, large_object_space, code_space ...). */
  spaces: Record<string, { usedKiB: number; physicalKiB: number }>;
}

export interface ProbeAnswer {
  threads: ThreadHeap[];
  externalKiB: number;
  arrayBuffersKiB: number;
  /** glibc's own count over all its arenas (`mallinfo2`): what is handed out, and what it holds free. */
  malloc?: { inUseKiB: number; freeKiB: number };
}

const kib = (bytes: number) => Math.round(bytes / 1024);

function ownHeap(): ThreadHeap {
  const heap = v8.getHeapStatistics();
  return {
    threadId,
    usedKiB: kib(heap.used_heap_size),
    committedKiB: kib(heap.total_heap_size),
    physicalKiB: kib(heap.total_physical_size),
    mallocedKiB: kib(heap.malloced_memory),
    externalKiB: kib(heap.external_memory),
    spaces: Object.fromEntries(
      v8.getHeapSpaceStatistics().map((space) => [space.space_name, { usedKiB: kib(space.space_used_size), physicalKiB: kib(space.physical_space_size) }]),
    ),
  };
}

/** glibc's `mallinfo2()` through koffi (as `src/process/memory-release.ts` calls `malloc_trim`); undefined elsewhere. */
function mallocCounts(): (() => ProbeAnswer['malloc']) | undefined {
  try {
    const koffi = createRequire(__filename)('koffi') as typeof import('koffi');
    const fields = ['arena', 'ordblks', 'smblks', 'hblks', 'hblkhd', 'usmblks', 'fsmblks', 'uordblks', 'fordblks', 'keepcost'];
    const info = koffi.struct('mallinfo2', Object.fromEntries(fields.map((name) => [name, 'size_t'])));
    const mallinfo2 = koffi.load('libc.so.6').func('mallinfo2', info, []) as () => Record<string, number>;
    return () => {
      const counts = mallinfo2();
      return { inUseKiB: kib(Number(counts.uordblks)), freeKiB: kib(Number(counts.fordblks)) };
    };
  } catch {
    return undefined;
  }
}

/**
 * With `HERALD_BENCH_MALLOC_INFO=<dir>`, glibc's `malloc_info` (XML: every arena's free chunks by size, and how much
 * of them is resident) is written to `<dir>/malloc-info-<pid>-<n>.xml` at each probe: whether the free memory that
 * stays resident after a trim is in chunks too small to give back (fragmentation) or not.
 */
function mallocInfoWriter(): (() => void) | undefined {
  const dir = process.env.HERALD_BENCH_MALLOC_INFO;
  if (!dir) return undefined;
  const koffi = createRequire(__filename)('koffi') as typeof import('koffi');
  const libc = koffi.load('libc.so.6');
  koffi.opaque('FILE');
  const fopen = libc.func('FILE *fopen(const char *path, const char *mode)') as (path: string, mode: string) => unknown;
  const mallocInfo = libc.func('int malloc_info(int options, FILE *stream)') as (options: number, stream: unknown) => number;
  const fclose = libc.func('int fclose(FILE *stream)') as (stream: unknown) => number;
  let n = 0;
  return () => {
    const file = fopen(`${dir}/malloc-info-${process.pid}-${++n}.xml`, 'w');
    mallocInfo(0, file);
    fclose(file);
  };
}

const channel = new BroadcastChannel('herald-bench-memory-probe');

/** Heaps of the other threads, while a probe is collecting them. */
let collecting: ThreadHeap[] | null = null;

channel.onmessage = (event) => {
  const data = (event as MessageEvent).data as { ask?: boolean; heap?: ThreadHeap };
  if (data.ask && !isMainThread) channel.postMessage({ heap: ownHeap() });
  if (data.heap && collecting) collecting.push(data.heap);
};
channel.unref();

if (isMainThread) {
  process.channel?.unref();
  const malloc = mallocCounts();
  const writeMallocInfo = mallocInfoWriter();
  process.on('message', (message: { probe?: boolean }) => {
    if (!message?.probe) return;
    writeMallocInfo?.();
    const threads = [ownHeap()];
    collecting = threads;
    channel.postMessage({ ask: true });
    setTimeout(() => {
      collecting = null;
      const usage = process.memoryUsage();
      process.send?.({ probeAnswer: { threads, externalKiB: kib(usage.external), arrayBuffersKiB: kib(usage.arrayBuffers), malloc: malloc?.() } satisfies ProbeAnswer });
    }, 500);
  });
}
