// The release after a burst (src/process/memory-release.ts, issue 15): V8's low-memory GC gives back old-space pages
// and young-generation room a plain full GC keeps, malloc_trim gives back glibc's free memory below live blocks, and
// the periodic check releases only once the process has grown and then gone quiet.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import v8 from 'node:v8';
import vm from 'node:vm';
import { Worker } from 'node:worker_threads';
import { createLogger } from '../../src/logger';
import { startMemoryRelease } from '../../src/process/memory-release';

const MiB = 1024 * 1024;
const newSpace = () => v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')!;
const oldSpace = () => v8.getHeapSpaceStatistics().find((space) => space.space_name === 'old_space')!;

/** Fills old space with small objects and keeps those `keep` picks, spread over every page: a fragmented heap. */
function fragmentOldSpace(keep: (i: number) => boolean, rounds = 40): object[] {
  const kept: object[] = [];
  for (let round = 0; round < rounds; round++) {
    const batch = Array.from({ length: 50_000 }, (_, i) => ({ round, i, text: `item ${round}:${i}` }));
    for (let i = 0; i < batch.length; i++) if (keep(i)) kept.push(batch[i]!);
  }
  return kept;
}

/** An ordinary full GC, as V8 runs them by itself. */
function plainFullGc(): void {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  v8.setFlagsFromString('--no-expose-gc');
  gc();
}

const glibc = process.platform === 'linux' && Boolean((process.report?.getReport() as { header?: { glibcVersionRuntime?: string } }).header?.glibcVersionRuntime);

describe('memory release after a burst', function () {
  this.timeout(60_000);
  const logger = createLogger('silent');

  it('gives back the old-space pages a burst left partly filled, which an ordinary full GC keeps', async () => {
    const release = startMemoryRelease(logger, { checkIntervalMs: 3_600_000 });
    try {
      // One object in three kept: V8's own full GCs leave such pages where they are (they move only sparse ones).
      const kept = fragmentOldSpace((i) => i % 3 === 0);
      plainFullGc();
      plainFullGc();
      const before = oldSpace();
      const outcome = await release.releaseNow();
      const after = oldSpace();
      assert.ok(kept.length > 600_000);
      const slackBefore = before.physical_space_size - before.space_used_size;
      const slackAfter = after.physical_space_size - after.space_used_size;
      // 32 MiB while every release compacted; V8's low-memory collection alone gives back ~25-45 MiB of this heap.
      assert.ok(before.physical_space_size - after.physical_space_size > 16 * MiB, `old space resident ${before.physical_space_size / MiB} -> ${after.physical_space_size / MiB} MiB`);
      assert.ok(slackAfter < slackBefore / 2, `resident above used: ${slackBefore / MiB} -> ${slackAfter / MiB} MiB`);
      // The process's resident size is not asserted: in a full test run other suites' memory moves it too.
      assert.ok(outcome.mainThreadGcMs >= 0 && outcome.workerThreadsGcMs >= 0 && outcome.rssAfterBytes > 0);
    } finally {
      release.stop();
    }
  });

  it('compacts old space when the low-memory collection left it fragmented, and only then', async () => {
    const release = startMemoryRelease(logger, { checkIntervalMs: 3_600_000 });
    try {
      // One object in two kept: pages half full, which V8's own collections leave where they are (~19 MiB of it for
      // 40 rounds; 80 here, so that the heap is well past the 16 MiB whatever other suites left in it).
      const kept = fragmentOldSpace((i) => i % 2 === 1, 80);
      plainFullGc();
      const outcome = await release.releaseNow();
      const after = oldSpace();
      assert.equal(outcome.compacted, true);
      assert.ok(after.physical_space_size - after.space_used_size < 16 * MiB, `resident above used after: ${(after.physical_space_size - after.space_used_size) / MiB} MiB`);
      // Nothing fragmented left (the same objects, just compacted): the next release does not compact (it would
      // hold the main thread 2-3 times longer). Dropping the objects first would leave whatever else of a full test
      // run's heap to chance.
      const next = await release.releaseNow();
      assert.ok(kept.length === 2_000_000);
      assert.equal(next.compacted, false);
    } finally {
      release.stop();
    }
  });

  it('shrinks the young generation a burst grew, which no ordinary GC shrinks', async () => {
    const release = startMemoryRelease(logger, { checkIntervalMs: 3_600_000 });
    try {
      // Short-lived objects of which the last few batches survive each scavenge: V8 grows new space to its maximum.
      let recent: object[][] = [];
      for (let round = 0; round < 200; round++) recent = [...recent.slice(-4), Array.from({ length: 20_000 }, (_, i) => ({ i, text: `x${i}` }))];
      recent = [];
      plainFullGc();
      const grown = newSpace().physical_space_size;
      await release.releaseNow();
      const after = newSpace().physical_space_size;
      assert.ok(grown >= 16 * MiB, `new space grew to ${grown / MiB} MiB`);
      assert.ok(after <= 4 * MiB, `new space ${grown / MiB} -> ${after / MiB} MiB`);
      assert.equal(recent.length, 0);
    } finally {
      release.stop();
    }
  });

  it('collects in worker threads too (the workflow thread is an isolate of its own)', async () => {
    // The worker grows its young generation with short-lived batches and answers each message with its heap's size.
    const worker = new Worker(
      `const { parentPort } = require('node:worker_threads');
       const v8 = require('node:v8');
       let recent = [];
       for (let round = 0; round < 200; round++) recent = [...recent.slice(-4), Array.from({ length: 20_000 }, (_, i) => ({ i, text: 'x' + i }))];
       recent = [];
       parentPort.on('message', () => parentPort.postMessage(v8.getHeapStatistics().total_physical_size));`,
      { eval: true },
    );
    const committed = () =>
      new Promise<number>((resolve) => {
        worker.once('message', resolve);
        worker.postMessage('size?');
      });
    const release = startMemoryRelease(logger, { checkIntervalMs: 3_600_000 });
    try {
      const grown = await committed();
      await release.releaseNow();
      const after = await committed();
      assert.ok(grown - after >= 12 * MiB, `worker heap ${grown / MiB} -> ${after / MiB} MiB`);
    } finally {
      release.stop();
      await worker.terminate();
    }
  });

  it('trims what glibc keeps below live blocks (glibc only)', async function () {
    if (!glibc) this.skip(); // malloc_trim is glibc's: other C libraries give memory back by themselves or not at all.
    const release = startMemoryRelease(logger, { checkIntervalMs: 3_600_000 });
    try {
      await release.releaseNow();
      // 1 KiB buffers are malloc'd one by one; keeping one in 64 pins memory all over the heap's range.
      let buffers: Buffer[] | null = Array.from({ length: 100_000 }, () => Buffer.allocUnsafeSlow(1000).fill(1));
      const pinned = buffers.filter((_, i) => i % 64 === 0);
      buffers = null;
      const outcome = await release.releaseNow();
      assert.equal(outcome.trimmed, true);
      assert.ok(pinned.length > 1_000);
      assert.ok(outcome.rssBeforeBytes - outcome.rssAfterBytes > 48 * MiB, `rss ${outcome.rssBeforeBytes / MiB} -> ${outcome.rssAfterBytes / MiB} MiB`);
    } finally {
      release.stop();
    }
  });

  it('trims glibc alone, without a GC, at a quiet check once the process has grown by a few MiB (glibc only)', async function () {
    if (!glibc) this.skip();
    const lines: Array<{ msg: string; rssBeforeMiB?: number; rssAfterMiB?: number }> = [];
    const capture = createLogger('debug', { write: (line: string) => void lines.push(JSON.parse(line)) });
    const release = startMemoryRelease(capture, { checkIntervalMs: 100, growthBytes: 1024 * MiB, quietUtilization: 0.5, trimGrowthBytes: 16 * MiB });
    try {
      await sleep(350); // the release after start-up
      let buffers: Buffer[] | null = Array.from({ length: 100_000 }, () => Buffer.allocUnsafeSlow(1000).fill(1));
      const pinned = buffers.filter((_, i) => i % 64 === 0);
      buffers = null;
      plainFullGc(); // the garbage collected as V8 would by itself: glibc has the memory back, resident
      await sleep(450);
      const trims = lines.filter((line) => line.msg === 'memory trimmed');
      assert.equal(lines.filter((line) => line.msg.startsWith('memory released')).length, 1, 'the start-up release only: no GC of its own');
      assert.ok(trims.length >= 1, JSON.stringify(lines));
      assert.ok(trims[0]!.rssBeforeMiB! - trims[0]!.rssAfterMiB! > 48, JSON.stringify(trims[0]));
      assert.ok(pinned.length > 1_000);
    } finally {
      release.stop();
    }
  });

  it('releases once at its first quiet check after start, grown or not (start-up is a burst of its own)', async () => {
    const lines: Array<{ msg: string }> = [];
    const capture = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) });
    const release = startMemoryRelease(capture, { checkIntervalMs: 100, growthBytes: 1024 * MiB, quietUtilization: 0.5, minIntervalMs: 0 });
    try {
      await sleep(650);
      assert.deepEqual(
        lines.map((line) => line.msg),
        ['memory released after start-up'],
      );
    } finally {
      release.stop();
    }
  });

  it('releases on its own once the process has grown and gone quiet, not while it is busy', async () => {
    const lines: Array<{ msg: string }> = [];
    const capture = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) });
    const release = startMemoryRelease(capture, { checkIntervalMs: 200, growthBytes: 16 * MiB, quietUtilization: 0.2 });
    try {
      const kept = fragmentOldSpace((i) => i % 40 === 0);
      // Busy: the event loop is held for the whole of each interval, so growth alone releases nothing.
      const busyUntil = Date.now() + 700;
      while (Date.now() < busyUntil) {
        const spin = Date.now() + 150;
        while (Date.now() < spin);
        await sleep(0);
      }
      assert.deepEqual(lines.filter((line) => line.msg === 'memory released after a burst'), []);
      await sleep(1_000);
      assert.equal(lines.filter((line) => line.msg === 'memory released after a burst').length, 1, 'one release once quiet');
      assert.ok(kept.length > 40_000);
    } finally {
      release.stop();
    }
  });
});
