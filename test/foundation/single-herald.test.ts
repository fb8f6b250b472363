import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import pg from 'pg';
import { createLogger } from '../../src/logger';
import { migrateDown } from '../../src/db/migrate';
import { holdEmbeddedTemporalLock, lockKey, runningEmbeddedTemporal } from '../../src/db/single-herald';
import { type RunningHerald, startHerald } from '../../src/main';
import { testConfig } from '../helpers/api';
import { type TestDatabase, createTestDatabase } from '../helpers/db';

/**
 * Two `npm start` on one database, each with its own embedded (empty) Temporal: the second would reconcile against
 * its own server, find every post's workflow missing and start a second one per post. It refuses to start instead,
 * and the first holds the lock through a lost connection, or stops when it cannot.
 */
describe('one Herald with the embedded Temporal per database', function () {
  this.timeout(120_000);
  let first: RunningHerald | undefined;
  afterEach(async () => {
    await first?.stop();
    first = undefined;
  });

  it('refuses a second start on the same database, saying why, and lets one start again once the first stopped', async () => {
    const database = await createTestDatabase();
    const config = testConfig({ DATABASE_URL: database.url, HOST: '127.0.0.1' });
    first = await startHerald(config, createLogger('silent'));
    await assert.rejects(startHerald(config, createLogger('silent')), {
      name: 'AnotherHeraldRuns',
      message: /^Another Herald with the embedded Temporal server already runs on this database: .*TEMPORAL_ADDRESS/,
    });
    await first.stop();
    first = undefined;
    const lock = await holdEmbeddedTemporalLock(database.url);
    await lock.release();
  });

  it('refuses a second start before it applies the migrations it brings (a `git pull` beside a running Herald)', async () => {
    const database = await createTestDatabase();
    const config = testConfig({ DATABASE_URL: database.url, HOST: '127.0.0.1' });
    first = await startHerald(config, createLogger('silent'));
    // The running Herald's code is one migration older than the second start's.
    const [reverted] = await migrateDown(database.db);
    await assert.rejects(startHerald(config, createLogger('silent')), { name: 'AnotherHeraldRuns' });
    const { rows } = await sql<{ name: string }>`select name from kysely_migration where name = ${reverted}`.execute(database.db);
    assert.deepEqual(rows, []);
  });

  it('takes the lock again at once when its connection is lost, so a second start is still refused', async () => {
    const database = await createTestDatabase();
    const config = testConfig({ DATABASE_URL: database.url, HOST: '127.0.0.1' });
    first = await startHerald(config, createLogger('silent'));
    const holder = await lockHolder(database);
    assert.ok(holder !== undefined);
    const announced = await runningEmbeddedTemporal(database.db);
    assert.match(announced ?? '', /^127\.0\.0\.1:\d+$/);
    // What a PostgreSQL restart, a failover or a dropped connection does to the session that holds the lock.
    await sql`select pg_terminate_backend(${holder})`.execute(database.db);
    let again: number | undefined;
    for (const deadline = Date.now() + 10_000; again === undefined || again === holder; await sleep(50)) {
      assert.ok(Date.now() < deadline, 'the lock was not taken again');
      again = await lockHolder(database);
    }
    await assert.rejects(startHerald(config, createLogger('silent')), { name: 'AnotherHeraldRuns' });
    assert.equal(await runningEmbeddedTemporal(database.db), announced, '`herald posts stuck` still finds its Temporal');
    const running = await Promise.race([first.failed, sleep(500, 'running')]);
    assert.equal(running, 'running');
  });

  it('stops when another process took the lock while its connection was lost', async () => {
    const database = await createTestDatabase();
    first = await startHerald(testConfig({ DATABASE_URL: database.url, HOST: '127.0.0.1' }), createLogger('silent'));
    const holder = await lockHolder(database);
    const other = new pg.Client({ connectionString: database.url });
    await other.connect();
    try {
      // One statement: the other queues for the lock before the session holding it ends, so it holds it before
      // Herald's new connection asks.
      await other.query(`select pg_terminate_backend($1), pg_advisory_lock(${lockKey})`, [holder]);
      const failure = await Promise.race([first.failed, sleep(10_000, 'still running')]);
      assert.notEqual(failure, 'still running');
      assert.match((failure as { message: string }).message, /^the one-Herald lock was lost: another Herald may run on this database/);
      assert.equal(((failure as { err: Error }).err).name, 'AnotherHeraldRuns');
    } finally {
      await other.end();
    }
  });
});

/** The backend that holds the one-Herald lock on this database, if any. */
async function lockHolder(database: TestDatabase): Promise<number | undefined> {
  const { rows } = await sql<{ pid: number }>`
    select l.pid from pg_locks l join pg_stat_activity a on a.pid = l.pid
    where l.locktype = 'advisory' and l.granted and a.datname = current_database() and a.application_name like 'herald-lock%'`.execute(database.db);
  return rows[0]?.pid;
}
