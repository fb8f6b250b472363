import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { type BurstDecision, createBurstLimiter } from '../../src/auth/burst-leases';
import { type TestDatabase, testDatabase } from '../helpers/db';

/**
 * The burst limiter's leases (src/auth/burst-leases.ts) against the real `rate_limits` table: two limiters over one
 * database stand for two API processes. The limit holds across them exactly; a key used through one process costs far
 * fewer statements than requests; one used through two is counted request by request.
 */
describe('burst limiter leases', function () {
  this.timeout(120_000);
  let database: TestDatabase;
  before(async () => {
    database = await testDatabase();
  });

  /** The pool, counting the statements sent through it. */
  function countingPool(): { pool: pg.Pool; statements: () => number } {
    let statements = 0;
    const pool = {
      query: (...args: Parameters<pg.Pool['query']>) => {
        statements += 1;
        return (database.pool.query as (...a: unknown[]) => unknown)(...args);
      },
    } as unknown as pg.Pool;
    return { pool, statements: () => statements };
  }

  const allowed = (decisions: BurstDecision[]) => decisions.filter((d) => d.allowed).length;

  it('through one process: exactly the limit, remaining counted down by one, a fraction of the statements', async () => {
    const { pool, statements } = countingPool();
    const limiter = createBurstLimiter(pool);
    const keyId = randomUUID();
    const decisions: BurstDecision[] = [];
    for (let i = 0; i < 250; i++) decisions.push(await limiter.consume(keyId, 200));
    assert.equal(allowed(decisions), 200);
    assert.deepEqual(
      decisions.slice(0, 200).map((d) => d.remaining),
      Array.from({ length: 200 }, (_, i) => 199 - i),
    );
    assert.ok(decisions.slice(200).every((d) => !d.allowed && d.remaining === 0));
    // Leases of 1, 1, 2, 4, 8, 10, 10, ... (a twentieth of 200), then one more to learn the window is full; refusals
    // after that are answered from memory.
    assert.ok(statements() <= 25, `${statements()} statements for 250 requests`);
    const { rows } = await database.pool.query<{ points: number }>('select points from rate_limits where key = $1', [`burst:${keyId}`]);
    assert.ok(rows[0]!.points >= 200);
  });

  it('through two processes: never more than the limit, in turns or at once', async () => {
    const a = createBurstLimiter(database.pool);
    const b = createBurstLimiter(database.pool);
    // One process alone first (its leases grow), then both in turns until both are refused.
    const key1 = randomUUID();
    const decisions: BurstDecision[] = [];
    for (let i = 0; i < 150; i++) decisions.push(await a.consume(key1, 200));
    for (let i = 0; i < 100; i++) decisions.push(await (i % 2 === 0 ? b : a).consume(key1, 200));
    assert.equal(allowed(decisions), 200, 'what one process leased it spends; the other gets the rest');

    // Concurrent requests of one key from both processes at once.
    const key2 = randomUUID();
    const burst = await Promise.all(Array.from({ length: 120 }, (_, i) => (i % 2 === 0 ? a : b).consume(key2, 40)));
    assert.ok(allowed(burst) <= 40, `${allowed(burst)} allowed of a limit of 40`);
    assert.ok(allowed(burst) >= 40 - 2, `${allowed(burst)} allowed: at most one unspent lease point per process lost`);
  });

  it('counts requests of a key one by one, with exact remaining, when two processes take turns', async () => {
    const a = createBurstLimiter(database.pool);
    const b = createBurstLimiter(database.pool);
    const keyId = randomUUID();
    for (let i = 0; i < 60; i++) {
      const decision = await (i % 2 === 0 ? a : b).consume(keyId, 60);
      assert.equal(decision.allowed, true, `request ${i + 1}`);
      assert.equal(decision.remaining, 59 - i, `remaining after request ${i + 1}`);
    }
    assert.equal((await a.consume(keyId, 60)).allowed, false);
    assert.equal((await b.consume(keyId, 60)).allowed, false);
  });

  it('starts a new window when the old one ends, and says when it ends', async () => {
    let now = Date.now();
    const { pool, statements } = countingPool();
    const limiter = createBurstLimiter(pool, { clock: () => now });
    const keyId = randomUUID();
    const first = await limiter.consume(keyId, 3);
    assert.equal(first.resetAt, now + 60_000);
    await limiter.consume(keyId, 3);
    await limiter.consume(keyId, 3);
    const refused = await limiter.consume(keyId, 3);
    assert.deepEqual({ allowed: refused.allowed, remaining: refused.remaining, resetAt: refused.resetAt }, { allowed: false, remaining: 0, resetAt: first.resetAt });
    const sent = statements();
    for (let i = 0; i < 5; i++) assert.equal((await limiter.consume(keyId, 3)).allowed, false);
    assert.equal(statements(), sent, 'a full window refuses from memory');

    now = first.resetAt;
    const next = await limiter.consume(keyId, 3);
    assert.deepEqual({ allowed: next.allowed, remaining: next.remaining, resetAt: next.resetAt }, { allowed: true, remaining: 2, resetAt: now + 60_000 });
  });
});
