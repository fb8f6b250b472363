import assert from 'node:assert/strict';
import { Client, Connection } from '@temporalio/client';
import { startServer } from '../../temporal-dev';
import { createLogger } from '../../src/logger';
import { registerSearchAttributes, searchAttributesOf } from '../../src/temporal/search-attributes';

/**
 * A registration of Herald's search attributes that the cluster refuses at start (here: the namespace is not there
 * yet) is tried again with a backoff, and once it succeeds workflows carry the attributes again. Before 2026-12-07
 * one refused try switched them off for the process's life.
 */
describe('search attributes registered after a refusal at start', function () {
  this.timeout(60_000);

  it('switches them off while refused, retries, and switches them back on once the cluster accepts', async () => {
    const temporal = await startServer({ port: 0 });
    const connection = await Connection.connect({ address: temporal.address });
    const client = new Client({ connection, namespace: 'registered-later' });
    const lines: Array<{ msg: string; level: number | string }> = [];
    const logger = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) });
    const post = { id: '00000000-0000-4000-8000-000000000001', user_id: '00000000-0000-4000-8000-000000000002', platform: 'x' };
    let registration: Awaited<ReturnType<typeof registerSearchAttributes>> | undefined;
    try {
      registration = await registerSearchAttributes(client, 'registered-later', logger, { firstMs: 100, maxMs: 400 });
      assert.deepEqual(searchAttributesOf([post]), [], 'off while the cluster refuses');
      assert.ok(lines.some((l) => /could not register search attributes/.test(l.msg)));

      await new Promise((resolve) => setTimeout(resolve, 700)); // a few refused retries
      const refusals = lines.filter((l) => /could not register search attributes/.test(l.msg)).length;
      assert.ok(refusals >= 2, `retried (${refusals} refusals)`);

      // The operator puts it right: the namespace is there now, and the next retry registers the attributes.
      await connection.workflowService.registerNamespace({ namespace: 'registered-later' });
      const until = Date.now() + 5_000;
      while (searchAttributesOf([post]).length === 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
      assert.deepEqual(
        searchAttributesOf([post]).map((pair) => pair.key.name),
        ['PostId', 'UserId', 'Platform'],
        'on again',
      );
      const listed = await connection.operatorService.listSearchAttributes({ namespace: 'registered-later' });
      assert.deepEqual(Object.keys(listed.customAttributes ?? {}).sort(), ['GroupId', 'Platform', 'PostId', 'ThreadId', 'UserId']);
      assert.ok(lines.some((l) => /search attributes registered/.test(l.msg)));

      // Registered: no more tries.
      const tries = lines.length;
      await new Promise((resolve) => setTimeout(resolve, 600));
      assert.equal(lines.length, tries);
    } finally {
      registration?.stop();
      await connection.close();
      await temporal.close();
    }
  });

  it('stops retrying when stopped', async () => {
    const temporal = await startServer({ port: 0 });
    const connection = await Connection.connect({ address: temporal.address });
    const client = new Client({ connection, namespace: 'never-there' });
    const lines: string[] = [];
    const logger = createLogger('info', { write: (line: string) => void lines.push(line) });
    try {
      const registration = await registerSearchAttributes(client, 'never-there', logger, { firstMs: 100, maxMs: 100 });
      registration.stop();
      const tries = lines.length;
      await new Promise((resolve) => setTimeout(resolve, 400));
      assert.equal(lines.length, tries);
    } finally {
      await connection.close();
      await temporal.close();
      // Leave the module as a successful registration would (one file per mocha run, but say so anyway).
      const ok = await startServer({ port: 0 });
      const okConnection = await Connection.connect({ address: ok.address });
      (await registerSearchAttributes(new Client({ connection: okConnection }), 'default', createLogger('silent'))).stop();
      await okConnection.close();
      await ok.close();
    }
  });
});
