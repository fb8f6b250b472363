import assert from 'node:assert/strict';
import { backoffMs, dueAt, isDue, MAX_BACKOFF_MS, readRecently, windowMs } from '../../src/comments/sync-windows';

/** The window and backoff arithmetic the listing and the sync activity share (publishing-api.md sync rules 2-4). */
describe('comment sync windows', () => {
  const at = (iso: string) => new Date(iso);

  it('has the windows of the spec per platform: [auto, true]', () => {
    const table = Object.fromEntries(
      (['x', 'facebook', 'instagram', 'threads', 'linkedin', 'bluesky', 'mastodon'] as const).map((p) => [p, [windowMs(p, 'auto') / 60_000, windowMs(p, 'true') / 60_000]]),
    );
    assert.deepEqual(table, { x: [15, 15], facebook: [5, 1], instagram: [5, 1], threads: [5, 1], linkedin: [5, 1], bluesky: [2, 1], mastodon: [2, 1] });
  });

  it('doubles the wait per consecutive failure from one auto window, up to an hour; a Retry-After wins', () => {
    assert.deepEqual([1, 2, 3, 4, 5].map((n) => backoffMs('x', n, null) / 60_000), [15, 30, 60, 60, 60]);
    assert.deepEqual([1, 2, 3, 4, 5, 6, 7].map((n) => backoffMs('bluesky', n, null) / 60_000), [2, 4, 8, 16, 32, 60, 60]);
    assert.equal(MAX_BACKOFF_MS, 3_600_000);
    assert.equal(backoffMs('x', 3, 7_200), 7_200_000, "the platform's own wait, even past an hour");
  });

  it('is due at once when never synced; auto waits its window after the last sync, true only for next_sync_after', () => {
    assert.equal(dueAt('mastodon', undefined, 'auto'), null);
    const state = { synced_at: at('2026-01-01T10:00:00Z'), next_sync_after: at('2026-01-01T10:01:00Z') };
    assert.equal(isDue('mastodon', state, 'true', at('2026-01-01T10:00:59Z')), false);
    assert.equal(isDue('mastodon', state, 'true', at('2026-01-01T10:01:00Z')), true);
    assert.equal(isDue('mastodon', state, 'auto', at('2026-01-01T10:01:30Z')), false);
    assert.equal(isDue('mastodon', state, 'auto', at('2026-01-01T10:02:00Z')), true);
    // After a failure next_sync_after carries the backoff, which holds for auto too.
    const failed = { synced_at: at('2026-01-01T10:00:00Z'), next_sync_after: at('2026-01-01T11:00:00Z') };
    assert.equal(isDue('mastodon', failed, 'auto', at('2026-01-01T10:30:00Z')), false);
  });

  it('counts a post as being read for 30 minutes after a listing', () => {
    assert.equal(readRecently(null, at('2026-01-01T10:00:00Z')), false);
    assert.equal(readRecently(at('2026-01-01T10:00:00Z'), at('2026-01-01T10:29:59Z')), true);
    assert.equal(readRecently(at('2026-01-01T10:00:00Z'), at('2026-01-01T10:30:00Z')), false);
  });
});
