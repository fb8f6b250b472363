// Preloaded by `bench/memory.ts` into each node process it measures (`node --require memory-probe.js ...`): answers
// a `{ probe: true }` IPC message with the V8 heap of every thread in the process (the main isolate and each worker
// thread's, e.g. the Temporal worker's workflow thread) and the process's own `process.memoryUsage()`. Node runs
// `--require` modules in worker threads too; each thread answers on a BroadcastChannel. Nothing here runs unless the
// bench loads it, and it keeps no thread alive (channels unref'd).
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
  process.on('message', (message: { probe?: boolean }) => {
    if (!message?.probe) return;
    const threads = [ownHeap()];
    collecting = threads;
    channel.postMessage({ ask: true });
    setTimeout(() => {
      collecting = null;
      const usage = process.memoryUsage();
      process.send?.({ probeAnswer: { threads, externalKiB: kib(usage.external), arrayBuffersKiB: kib(usage.arrayBuffers) } satisfies ProbeAnswer });
    }, 500);
  });
}
