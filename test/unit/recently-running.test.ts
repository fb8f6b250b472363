import assert from 'node:assert/strict';
import { RecentlyRunning } from '../../src/posts/recently-running';

describe('RecentlyRunning: the workflows this process started or saw running within the window', () => {
  it('knows a start until the window has passed, and a repeated start renews it', () => {
    let now = 1_000_000;
    const starts = new RecentlyRunning(60_000, () => now);
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
});
