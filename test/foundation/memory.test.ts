// What keeps `npm start`'s idle memory down (issue 15): the workflow bundle is built in a child process, and the
// embedded PostgreSQL runs without its io worker processes. (The worker's cache bound and temporal-dev's compact
// history are tested in temporal-dev/test/memory.test.ts.)
import assert from 'node:assert/strict';
import { maxCachedWorkflows } from '../../src/temporal/worker';
import { bundleWorkflowsInChild } from '../../src/temporal/workflow-bundle';
import { testDatabase } from '../helpers/db';

describe('memory: workflow bundle built in a child process', function () {
  this.timeout(180_000);

  it("bundles Herald's workflows without loading the bundler's tool chain into this process", async () => {
    const loadedBefore = new Set(Object.keys(require.cache));
    const { code } = await bundleWorkflowsInChild(require.resolve('../../workflows'));
    const loadedByBundling = Object.keys(require.cache).filter((file) => !loadedBefore.has(file));
    assert.deepEqual(loadedByBundling, []);
    for (const workflow of ['publishPost', 'publishGroup', 'publishThread', 'keepCredentialAlive']) {
      assert.match(code, new RegExp(`\\b${workflow}\\b`), `${workflow} is in the bundle`);
    }
  });

  it('says why when bundling fails', async () => {
    await assert.rejects(bundleWorkflowsInChild('/nonexistent/workflows'), /bundling the workflows failed \(exit 1\): .+/s);
  });

  it('bounds the worker cache to tens of runs (each ~145 KiB), far below the SDK default (~2,300)', () => {
    assert.ok(maxCachedWorkflows >= 2 && maxCachedWorkflows <= 100);
  });
});

describe('memory: embedded PostgreSQL settings', function () {
  this.timeout(120_000);

  it('reads synchronously (no io worker processes)', async () => {
    const { pool } = await testDatabase();
    const { rows } = await pool.query<{ io_method: string }>('show io_method');
    assert.equal(rows[0]!.io_method, 'sync');
    const { rows: workers } = await pool.query<{ n: string }>(`select count(*) as n from pg_stat_activity where backend_type = 'io worker'`);
    assert.equal(Number(workers[0]!.n), 0);
  });
});
