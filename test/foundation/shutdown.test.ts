import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { defineRoute } from '../../api/route';
import { apiRoutes } from '../../api/routes';
import { createLogger } from '../../src/logger';
import { startHerald } from '../../src/main';
import { createUserWithKey, request, testConfig } from '../helpers/api';
import { testDatabase } from '../helpers/db';

describe('graceful shutdown', function () {
  this.timeout(120_000);

  it('answers requests in flight before it stops, and refuses new connections after', async () => {
    const database = await testDatabase();
    const slow = defineRoute({
      method: 'get',
      path: '/test/slow',
      summary: 'takes a second',
      scope: null,
      responses: { 200: { description: 'done' } },
      handler: async () => {
        await sleep(1_000);
        return { status: 200, body: { data: { done: true } } };
      },
    });
    const herald = await startHerald(
      testConfig({ DATABASE_URL: database.url, PORT: '0', HOST: '127.0.0.1' }),
      createLogger('silent'),
      { routes: [...apiRoutes, slow] },
    );
    const { apiKey } = await createUserWithKey(database.db);
    const inFlight = request(herald.url, 'GET', '/api/v1/test/slow', { key: apiKey });
    await sleep(300);
    const stopping = herald.stop();
    const res = await inFlight;
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { data: { done: true } });
    await stopping;
    await assert.rejects(request(herald.url, 'GET', '/healthz'), { name: 'TypeError', message: 'fetch failed' });
  });
});
