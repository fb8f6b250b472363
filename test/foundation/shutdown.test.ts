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

  it('stops the worker taking tasks at the signal, while requests in flight are still being answered', async () => {
    const database = await testDatabase();
    let entered!: () => void;
    const inHandler = new Promise<void>((resolve) => (entered = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const workerState = defineRoute({
      method: 'get',
      path: '/test/worker-state',
      summary: 'the worker probe, asked once the test says',
      scope: null,
      responses: { 200: { description: 'what the worker probe said' } },
      handler: async ({ deps }) => {
        entered();
        await released;
        const probe = deps.probes!.find((p) => p.name === 'worker')!;
        const said = await probe.check().then(() => 'running', (err: Error) => err.message);
        return { status: 200, body: { data: { worker: said } } };
      },
    });
    const herald = await startHerald(testConfig({ DATABASE_URL: database.url, PORT: '0', HOST: '127.0.0.1' }), createLogger('silent'), {
      routes: [...apiRoutes, workerState],
    });
    const { apiKey } = await createUserWithKey(database.db);
    const inFlight = request(herald.url, 'GET', '/api/v1/test/worker-state', { key: apiKey });
    await inHandler;
    const stopping = herald.stop();
    await sleep(200);
    release();
    const res = await inFlight;
    await stopping;
    assert.equal(res.status, 200);
    assert.notEqual((res.body as { data: { worker: string } }).data.worker, 'running');
  });

  it('answers requests still in flight 503 (envelope, Retry-After) once the shutdown budget is spent, and stops', async () => {
    const database = await testDatabase();
    const never = new AbortController();
    const stuck = defineRoute({
      method: 'get',
      path: '/test/stuck',
      summary: 'answers after the shutdown budget (an immediate publish to a slow platform)',
      scope: null,
      responses: { 200: { description: 'done' } },
      handler: async () => {
        await sleep(20_000, undefined, { signal: never.signal }).catch(() => undefined);
        return { status: 200, body: { data: { done: true } } };
      },
    });
    // 6 s: in-flight requests and activities get 1 s, the rest 5 s.
    const herald = await startHerald(
      testConfig({ DATABASE_URL: database.url, PORT: '0', HOST: '127.0.0.1', SHUTDOWN_TIMEOUT_MS: '6000' }),
      createLogger('silent'),
      { routes: [...apiRoutes, stuck] },
    );
    const { apiKey } = await createUserWithKey(database.db);
    try {
      const inFlight = request(herald.url, 'GET', '/api/v1/test/stuck', { key: apiKey });
      const outcome = inFlight.then((res) => res, (err: Error) => `connection closed: ${err.message}`);
      await sleep(300);
      const started = Date.now();
      await herald.stop();
      assert.ok(Date.now() - started < 6_000, `stopped after ${Date.now() - started} ms`);
      // Before 2026-12-07 the connection was closed with no answer at all.
      const res = await outcome;
      assert.ok(typeof res !== 'string', res as string);
      assert.equal(res.status, 503);
      assert.equal(res.headers.get('retry-after'), '5');
      assert.ok(res.headers.get('x-request-id'), 'the request id set before the cut is kept');
      const body = res.body as { error: { code: string; message: string } };
      assert.equal(body.error.code, 'service_unavailable');
      assert.match(body.error.message, /Herald stopped before this request was answered/);
    } finally {
      never.abort();
    }
  });
});
