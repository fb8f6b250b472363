import assert from 'node:assert/strict';
import type { Client } from '@temporalio/client';
import type { PoolClient } from 'pg';
import { createLogger } from '../../src/logger';
import { startWebhookReconciler } from '../../src/webhooks/reconcile';
import { createTestDatabase, type TestDatabase } from '../helpers/db';

/**
 * The webhook reconciler, as the posts reconciler: one look at a time, and `stop()` resolves only once the look in
 * progress has ended (the shutdown closes Temporal's client and the database after it). A look is held in progress
 * by a lock on `webhook_dispatches` that another connection takes: its read waits for it, as for a slow database.
 */
describe('Webhook reconciler: one look at a time, stop() waits for it', function () {
  this.timeout(60_000);
  let database: TestDatabase;
  before(async () => {
    database = await createTestDatabase();
  });

  const waitersOnDispatches = async () =>
    Number((await database.pool.query(`select count(*) as n from pg_locks where not granted and relation = 'webhook_dispatches'::regclass`)).rows[0].n);

  it('does not start a look while one runs, and stop() returns only once it has ended', async () => {
    const holder: PoolClient = await database.pool.connect();
    await holder.query('begin');
    await holder.query('lock table webhook_dispatches in access exclusive mode');
    // No delivery is waiting in this fresh database: nothing is asked of Temporal.
    const reconciler = startWebhookReconciler({ db: database.db, temporal: {} as Client, taskQueue: 'unused', logger: createLogger('silent') }, 20);
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(await waitersOnDispatches(), 1, 'one look waits; the interval started no other');

    let stopped = false;
    const stopping = Promise.resolve(reconciler.stop()).then(() => (stopped = true));
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(stopped, false, 'stop() returned while a look was still reading');
    await holder.query('commit');
    holder.release();
    await stopping;
    assert.deepEqual(await reconciler.first, { checked: 0 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(await waitersOnDispatches(), 0, 'no look after stop()');
  });
});
