import assert from 'node:assert/strict';
import { InstantClaims } from '../../src/posts/instant-claims';

describe('InstantClaims: the held posts of one instant claimed together (issue 15, burst)', () => {
  it('claims asked in one turn for one instant go out batchSize per call; other instants apart', async () => {
    const calls: Array<{ ids: string[]; at: number }> = [];
    const claims = new InstantClaims(async (ids, at) => {
      calls.push({ ids, at: at.getTime() });
      return ids.filter((id) => id !== 'p3').map((id) => ({ id }));
    }, 2);
    const results = await Promise.all([claims.claim('p1', 1_000), claims.claim('p2', 1_000), claims.claim('p3', 1_000), claims.claim('q1', 2_000)]);
    assert.deepEqual(results, [{ id: 'p1' }, { id: 'p2' }, undefined, { id: 'q1' }]);
    assert.deepEqual(calls, [
      { ids: ['p1', 'p2'], at: 1_000 },
      { ids: ['p3'], at: 1_000 },
      { ids: ['q1'], at: 2_000 },
    ]);
  });

  it('a failed statement fails the claims in it only; a post asked twice in one batch is taken once', async () => {
    const claims = new InstantClaims(async (ids) => {
      if (ids.includes('bad')) throw new Error('database gone');
      return ids.map((id) => ({ id }));
    }, 2);
    const [first, second, bad, other] = await Promise.allSettled([claims.claim('twice', 1_000), claims.claim('twice', 1_000), claims.claim('bad', 1_000), claims.claim('fine', 1_000)]);
    assert.deepEqual(first, { status: 'fulfilled', value: { id: 'twice' } });
    assert.deepEqual(second, { status: 'fulfilled', value: undefined });
    assert.equal(bad.status, 'rejected');
    assert.equal(other.status, 'rejected', 'in the same statement as the failed one');
    assert.deepEqual(await claims.claim('later', 1_000), { id: 'later' }, 'a later turn starts a new batch');
  });

  it('two holds of one post at different schedule versions: claimed at the higher, the row goes to its hold only', async () => {
    const asked: Array<Record<string, number>> = [];
    // As `claimAllScheduledAt`: a row is taken only at the version asked for it, and comes back with it.
    const rows: Record<string, number> = { moved: 2, other: 0 };
    const claims = new InstantClaims(async (ids, _at, versions) => {
      asked.push(versions);
      return ids.filter((id) => rows[id] === versions[id]).map((id) => ({ id, schedule_version: rows[id]! }));
    }, 10);
    // The abandoned hold (version 0) asks first, as it set the instant's timer.
    const [stale, current, other] = await Promise.all([claims.claim('moved', 1_000, 0), claims.claim('moved', 1_000, 2), claims.claim('other', 1_000)]);
    assert.deepEqual(asked, [{ moved: 2, other: 0 }]);
    assert.deepEqual([stale, current, other], [undefined, { id: 'moved', schedule_version: 2 }, { id: 'other', schedule_version: 0 }]);
  });
});
