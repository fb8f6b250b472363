import { createRequire } from 'node:module';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import type { Logger } from '../logger';
import { lowMemoryGcFunction } from './low-memory-gc';

/**
 * Gives back the memory a burst leaves behind (issue 15, README "Memory"). Scheduling 10,000 posts grows the process
 * by hundreds of MiB of garbage; once it is collected, three things stay resident for as long as the posts wait:
 * V8's old-space pages, each still holding a few live objects (V8 compacts only the most fragmented pages), its
 * young generation, grown to 32 MiB by the burst and never shrunk by an ordinary GC, and the memory glibc keeps
 * below live blocks of its heap (it gives back only the top). None of them shrinks by itself.
 *
 * So when the process has grown by `growthBytes` since its last release and then been quiet for a whole check
 * interval, it runs V8's low-memory collection (full GCs that shrink the young generation) with every old-space page
 * compacted, and glibc's `malloc_trim(0)`, which returns the free pages inside its heaps. Both hold the main thread
 * (tens to a few hundred ms, logged), which is why it waits for quiet: a busy process is never paused by it, and a
 * burst is paid for once, after it, not per request. A burst's release is followed by one more a minute later,
 * start-up gets one of its own (`owed`), and there is at most one release a minute: a quiet process that keeps
 * growing by a little is not compacted at every check.
 *
 * Between releases, a quiet check that finds the process grown by `trimGrowthBytes` since the last trim runs
 * `malloc_trim(0)` alone (a few milliseconds, no GC): what glibc got back from the garbage of the last minutes' work
 * (the reconciler reading a burst's rows each minute for 10 minutes, pg's and gRPC's buffers) would otherwise stay
 * resident until the next release, which only a 32 MiB growth brings.
 */

interface MemoryReleaseOptions {
  /** How often the process's size and activity are read. */
  checkIntervalMs?: number;
  /** Growth of the resident size since the last release (or the smallest size seen) that is worth a release. */
  growthBytes?: number;
  /** The event loop's busy share over the last interval under which the process counts as quiet. */
  quietUtilization?: number;
  /** The shortest time between two releases: what a quiet process that still makes garbage pays at most. */
  minIntervalMs?: number;
  /** Growth of the resident size since the last trim (or the smallest size seen) worth a `malloc_trim` alone. */
  trimGrowthBytes?: number;
}

interface MemoryRelease {
  /** Compacts and trims now; resolves to what it took and gave back. */
  releaseNow(): Promise<ReleaseOutcome>;
  stop(): void;
}

interface ReleaseOutcome {
  rssBeforeBytes: number;
  rssAfterBytes: number;
  /** The main thread's collection: how long it held the event loop. */
  mainThreadGcMs: number;
  /** The worker threads' collections, which ran on those threads while the main thread waited for them. */
  workerThreadsGcMs: number;
  /** Whether the main thread's old space was left fragmented enough to be compacted (`low-memory-gc.ts`). */
  compacted: boolean;
  trimMs: number;
  /** False where glibc's `malloc_trim` is not available (another libc, another OS). */
  trimmed: boolean;
}

const defaults: Required<MemoryReleaseOptions> = {
  checkIntervalMs: 10_000,
  growthBytes: 32 * 1024 * 1024,
  quietUtilization: 0.05,
  minIntervalMs: 60_000,
  trimGrowthBytes: 4 * 1024 * 1024,
};

export function startMemoryRelease(logger: Logger, options: MemoryReleaseOptions = {}): MemoryRelease {
  const { checkIntervalMs, growthBytes, quietUtilization, minIntervalMs, trimGrowthBytes } = { ...defaults, ...options };
  const lowMemoryGc = lowMemoryGcFunction();
  const trim = mallocTrimFunction(logger);
  let settledRss = process.memoryUsage.rss();
  let trimmedRss = settledRss;
  let lastLoop: EventLoopUtilization = performance.eventLoopUtilization();
  let lastReleaseAt = -Infinity;
  /**
   * A release owed without growth. Start-up is a burst of its own (the bundle, the migrations, the worker's first
   * polls), so the first quiet check releases whether or not the process grew by `growthBytes` since this started:
   * idle memory no longer depends on when in start-up this was called. And a burst's release is followed by one more
   * at the next quiet check a minute later: what the first one let go of (the workflow thread's heap shrinking by
   * itself, the reconciler's garbage) is only then back in glibc's hands.
   */
  let owed: 'after start-up' | 'after a burst, once more' | undefined = 'after start-up';

  let releasing = false;

  const releaseNow = async (): Promise<ReleaseOutcome> => {
    const rssBeforeBytes = process.memoryUsage.rss();
    const gc = await lowMemoryGc();
    const trimStart = performance.now();
    trim?.();
    const trimmed = trim !== undefined;
    const trimEnd = performance.now();
    const rssAfterBytes = process.memoryUsage.rss();
    settledRss = trimmedRss = rssAfterBytes;
    lastReleaseAt = performance.now();
    return { rssBeforeBytes, rssAfterBytes, mainThreadGcMs: gc.mainThreadMs, workerThreadsGcMs: gc.workerThreadsMs, compacted: gc.compacted, trimMs: trimEnd - trimStart, trimmed };
  };

  const check = async () => {
    if (releasing) return;
    const loop = performance.eventLoopUtilization();
    const utilization = performance.eventLoopUtilization(loop, lastLoop).utilization;
    lastLoop = loop;
    const rss = process.memoryUsage.rss();
    settledRss = Math.min(settledRss, rss);
    trimmedRss = Math.min(trimmedRss, rss);
    if (utilization >= quietUtilization) return;
    const grown = rss - settledRss >= growthBytes;
    if (performance.now() - lastReleaseAt < minIntervalMs || (!grown && !owed)) {
      if (trim && rss - trimmedRss >= trimGrowthBytes) trimAlone(rss);
      return;
    }
    releasing = true;
    const outcome = await releaseNow().finally(() => (releasing = false));
    const reason = grown ? 'after a burst' : owed;
    owed = grown ? 'after a burst, once more' : undefined;
    logger.info(
      {
        rssBeforeMiB: mib(outcome.rssBeforeBytes),
        rssAfterMiB: mib(outcome.rssAfterBytes),
        mainThreadGcMs: Math.round(outcome.mainThreadGcMs),
        workerThreadsGcMs: Math.round(outcome.workerThreadsGcMs),
        compacted: outcome.compacted,
        trimMs: Math.round(outcome.trimMs),
        trimmed: outcome.trimmed,
      },
      `memory released ${reason}`,
    );
  };
  const trimAlone = (rssBeforeBytes: number) => {
    const start = performance.now();
    trim?.();
    trimmedRss = process.memoryUsage.rss();
    logger.debug({ rssBeforeMiB: mib(rssBeforeBytes), rssAfterMiB: mib(trimmedRss), trimMs: Math.round(performance.now() - start) }, 'memory trimmed');
  };

  const timer = setInterval(() => void check().catch((err) => logger.warn({ err }, 'memory release failed')), checkIntervalMs);
  timer.unref();
  return { releaseNow, stop: () => clearInterval(timer) };
}

const mib = (bytes: number) => Math.round(bytes / 1024 / 1024);

/** glibc's `malloc_trim(0)` through koffi (a prebuilt FFI), or undefined where there is no glibc to ask. */
function mallocTrimFunction(logger: Logger): (() => number) | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    const koffi = createRequire(__filename)('koffi') as typeof import('koffi');
    const mallocTrim = koffi.load('libc.so.6').func('int malloc_trim(size_t pad)') as (pad: number) => number;
    return () => mallocTrim(0);
  } catch (err) {
    logger.debug({ err }, 'malloc_trim is not available (not glibc): memory is released by the GC alone');
    return undefined;
  }
}
