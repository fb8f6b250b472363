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

  it("takes a lone key's next lease ahead: once its lease has grown, no request waits for a statement", async () => {
    // A pool whose statements can be held back: a request that still needs one does not resolve while they are.
    let held: Promise<void> | null = null;
    let sent = 0;
    const pool = {
      query: async (...args: unknown[]) => {
        sent += 1;
        if (held) await held;
        return (database.pool.query as (...a: unknown[]) => unknown)(...args);
      },
    } as unknown as pg.Pool;
    const limiter = createBurstLimiter(pool);
    const keyId = randomUUID();
    const settled = () => new Promise((done) => setTimeout(done, 50)); // the lease taken ahead comes back
    for (let i = 0; i < 3; i++) {
      await limiter.consume(keyId, 600);
      await settled();
    }
    const statementsBefore = sent;
    for (let i = 0; i < 40; i++) {
      let release!: () => void;
      held = new Promise((done) => (release = done));
      const decision = await Promise.race([limiter.consume(keyId, 600), settled().then(() => null)]);
      release();
      held = null;
      assert.ok(decision?.allowed, `request ${i + 4} waited for a statement`);
      assert.equal(decision.remaining, 600 - (i + 4), `remaining after request ${i + 4}`);
      await settled();
    }
    // Leases of 2, 4, 8, 16, 30 (a twentieth of 600) cover the 40: five statements, each taken ahead.
    assert.ok(sent - statementsBefore <= 6, `${sent - statementsBefore} statements for 40 requests`);
  });

  it('a lease taken ahead that fails is forgotten: the next request takes its own', async () => {
    let sent = 0;
    const pool = {
      query: async (...args: unknown[]) => {
        sent += 1;
        // The third lease is the first one taken ahead (by the second request, once its lease is spent: its second alone).
        if (sent === 3) throw new Error('connection lost');
        return (database.pool.query as (...a: unknown[]) => unknown)(...args);
      },
    } as unknown as pg.Pool;
    const limiter = createBurstLimiter(pool);
    const keyId = randomUUID();
    await limiter.consume(keyId, 600);
    const second = await limiter.consume(keyId, 600);
    assert.equal(second.allowed, true);
    await new Promise((done) => setTimeout(done, 50));
    assert.equal(sent, 3, 'the lease ahead was sent, and failed');
    const third = await limiter.consume(keyId, 600);
    assert.deepEqual({ allowed: third.allowed, remaining: third.remaining }, { allowed: true, remaining: 597 });
    assert.equal(sent, 4, 'the third request took its own lease');
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
