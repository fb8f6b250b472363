import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { RecentStarts } from '../../src/posts/recent-starts';
import { postWorkflowId } from '../../src/posts/workflow-client';

describe('RecentStarts: the workflows this process started within the window', () => {
  it('knows a start until the window has passed, and a repeated start renews it', () => {
    let now = 1_000_000;
    const starts = new RecentStarts(60_000, () => now);
    starts.record('post-a');
    now += 30_000;
    starts.record('post-b');
    assert.deepEqual([starts.has('post-a'), starts.has('post-b'), starts.has('post-c')], [true, true, false]);
    now += 30_000;
    assert.deepEqual([starts.has('post-a'), starts.has('post-b')], [false, true], 'a start as old as the window is forgotten');
    starts.record('post-b');
    now += 45_000;
    assert.equal(starts.has('post-b'), true, 'renewed by its second start');
    now += 15_000;
    assert.equal(starts.has('post-b'), false);
  });

  it('holds a start in under 200 bytes, not the ~590 of the id as randomUUID and the prefix built it (issue 15)', () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const heapUsed = () => {
      for (let i = 0; i < 3; i++) gc();
      return process.memoryUsage().heapUsed;
    };
    const starts = new RecentStarts();
    const before = heapUsed();
    for (let i = 0; i < 5000; i++) starts.record(postWorkflowId(randomUUID()));
    const perStart = (heapUsed() - before) / 5000;
    assert.ok(perStart < 200, `${perStart.toFixed(0)} bytes a start`);
    assert.equal(starts.has(postWorkflowId(randomUUID())), false);
  });
});

