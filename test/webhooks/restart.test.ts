import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { recordEvents } from '../../src/events/outbox';
import { createLogger } from '../../src/logger';
import { startHerald, type RunningHerald } from '../../src/main';
import { createUserWithKey, request, testConfig } from '../helpers/api';
import { testDatabase, type TestDatabase } from '../helpers/db';
import { silenceSdkLogs } from '../helpers/temporal';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The embedded Temporal keeps workflows in memory: a stop in the middle of a delivery's retry schedule loses its
 * workflow. The next start's webhook reconciler (src/webhooks/reconcile.ts) restarts it from `webhook_dispatches`,
 * resuming the schedule: the receiver gets the event once more, and no attempt is made or recorded twice.
 */
describe('Webhook deliveries survive a restart of the service (embedded, memory-only Temporal)', function () {
  this.timeout(120_000);
  let database: TestDatabase;
  let dataDir: string;
  let herald: RunningHerald | undefined;
  let receiver: Server;
  let url: string;
  const answers: number[] = [];
  const received: string[] = [];

  before(async () => {
    silenceSdkLogs();
    database = await testDatabase();
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'herald-webhook-restart-'));
    receiver = createServer((req, res) => {
      received.push(String(req.headers['webhook-id']));
      req.resume();
      req.on('end', () => {
        res.statusCode = answers.shift() ?? 200;
        res.end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  });
  after(async () => {
    await herald?.stop();
    receiver?.closeAllConnections();
    receiver?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  const start = () => startHerald(testConfig({ DATABASE_URL: database.url, HERALD_DATA_DIR: dataDir, HOST: '127.0.0.1' }), createLogger('silent'));
  const dispatchOf = (eventId: string) => database.db.selectFrom('webhook_dispatches').selectAll().where('event_id', '=', eventId).execute();
  const attemptsOf = (eventId: string) => database.db.selectFrom('webhook_deliveries').selectAll().where('event_id', '=', eventId).orderBy('attempted_at').execute();
  const until = async (check: () => Promise<boolean>, what: string) => {
    for (let i = 0; i < 300; i += 1) {
      if (await check()) return;
      await sleep(100);
    }
    assert.fail(`timed out waiting for ${what}`);
  };

  it('a delivery stopped during its retry wait is resumed by the next start, and delivered exactly once more', async () => {
    const user = await createUserWithKey(database.db, 'agent');
    herald = await start();
    const created = await request(herald.url, 'POST', '/api/v1/webhooks', { key: user.apiKey, body: { url } });
    assert.equal(created.status, 201, created.text);
    const endpointId = created.body.data.id as string;

    answers.push(500); // the first attempt fails: the delivery waits 5 s for its second
    const [event] = await database.db.transaction().execute((trx) => recordEvents(trx, [{ userId: user.userId, type: 'post.published', data: { id: 'across-a-restart' }, request: null }]));
    await until(async () => (await dispatchOf(event.id))[0]?.attempts === 1, 'the first attempt recorded');
    await herald.stop();
    herald = undefined;

    assert.deepEqual(received, [event.id]);
    const [waiting] = await dispatchOf(event.id);
    assert.deepEqual([waiting.endpoint_id, waiting.attempts, waiting.settled_at], [endpointId, 1, null], 'pending, one attempt made');
    await sleep(Math.max(0, waiting.next_attempt_at.getTime() - Date.now()) + 500); // down past the retry's due time

    herald = await start();
    await until(async () => (await dispatchOf(event.id))[0]?.settled_at !== null, 'the delivery settled');
    assert.deepEqual(received, [event.id, event.id], 'delivered once more, with the same webhook-id');
    const attempts = await attemptsOf(event.id);
    assert.deepEqual(attempts.map((a) => [a.status_code, a.delivered]), [[500, false], [200, true]], 'one row per attempt');

    await herald.stop();
    herald = await start();
    await sleep(2_000);
    assert.equal(received.length, 2, 'a third start sends nothing again');
    assert.equal((await attemptsOf(event.id)).length, 2);
    assert.equal((await dispatchOf(event.id)).length, 1, 'one dispatch row for the event and endpoint');
  });
});
