// Memory of Herald as `npm start` runs it (issue 15): PSS and RSS of every process, idle after start and with
// scheduled posts waiting a week ahead, beside a baseline measured in the same run.
//
//  1. Starts `node <out>/src/main.js` with the defaults `npm start` uses (embedded PostgreSQL under a fresh data dir,
//     the embedded temporal-dev in the same process, the worker, the API). The Web UI is off unless `--web-ui` is
//     given: it is served by temporal-dev's own HTTP server inside the same process (no process of its own), but its
//     first start builds it with vite, which would be measured instead of Herald.
//  2. Idle: once Herald has released memory after its start-up (its log says so, at most a minute) and settled
//     (below), reads /proc/<pid>/smaps_rollup of every process in Herald's tree (node and each PostgreSQL process,
//     named by its title).
//  3. Schedules POSTS posts through the HTTP API: fan-outs to 25 x accounts (each post gets its own `publishPost`
//     workflow, waiting on a timer), spaced 6 minutes apart per account (the 5-minute rule), starting 7 days ahead.
//  4. Settles again (nothing forces a GC: what a real process holds is what is measured), reads again, and prints
//     per process, the total, and the growth per 1,000 waiting posts; also with PostgreSQL's shared buffers counted
//     whole (every buffer holding a page, from pg_buffercache) instead of the share of them live processes mapped:
//     a burst's rows read by a backend that has since exited are resident all the same, and PSS no longer sees them.
//  Baseline, same run: a bare node:http + pg process (bench/memory-bare.js, one connection open) with its backend,
//  and the PostgreSQL cluster's own processes without client backends.
//  Settling: after Herald's release of memory (its log line, at most a minute: at start-up and after the burst),
//  until Herald's processes use under 5% of a core over 3 s (the worker has run every new workflow's first
//  task), then SETTLE_S more (the pg pool closes connections idle for 10 s). PSS is split into anonymous memory
//  (heaps) and file-backed (code, shared libraries) so the table says which one grew.
//  `--separate-temporal` runs temporal-dev as its own process (TEMPORAL_ADDRESS), to tell its memory from the worker's.
//  `--heap-snapshots` has each node process write a heap snapshot (into the current directory) at every reading
//  (a snapshot collects garbage first: the later readings are then of a process that was just collected).
//  `bench/heap-diff.js idle.heapsnapshot waiting.heapsnapshot` then says what is new and who holds it.
//  Breakdown of each node process (bench/memory-breakdown.ts): V8 heap used/committed of the main isolate and of the
//  worker threads (the workflow thread), external memory, and anonymous mappings by kind (glibc's brk heap and
//  thread arenas, other anonymous), read through a probe preloaded with `--require` (bench/memory-probe.ts, answers
//  over IPC; it adds no memory worth counting and runs nothing until asked).
//  `--late=SECONDS` (default 120): a third reading that much later, with nothing happening in between, to see
//  what a process holds minutes after the burst (V8's memory reducer and glibc's trimming need idle time).
// Bounded: 15 minutes at most (13 plus --late); about 7 on a quiet machine (the worker takes a few minutes to run 10,000 first
// workflow tasks on two busy cores; the waiting reading is taken once it has).
//  Herald's process gets the environment `npm start` sets (package.json's start script, e.g. MALLOC_ARENA_MAX).
//  `--env=NAME=VALUE` (repeatable) and `--node-flag=FLAG` (repeatable) start Herald's process with that environment
//  variable or node flag, to measure a remedy (e.g. `--env=MALLOC_ARENA_MAX=2`) before it goes into `npm start`.
// Usage: node <out>/bench/memory.js [posts=10000] [--web-ui] [--settle=SECONDS] [--late=SECONDS] [--separate-temporal] [--heap-snapshots]
//        [--env=NAME=VALUE ...] [--node-flag=FLAG ...]
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createApiKey } from '../src/auth/api-keys';
import { openDatabase } from '../src/db';
import { createUser, setPlan } from '../src/users/users';
import { testEncryptionKey } from '../test/helpers/api';
import { insertAccount } from '../test/posts/fixtures';
import { breakdownOf, printBreakdowns, type NodeBreakdown } from './memory-breakdown';

const flags = process.argv.slice(2);
const POSTS = Number(flags.find((a) => /^\d+$/.test(a)) ?? 10_000);
const WEB_UI = flags.includes('--web-ui');
const SETTLE_S = Number(flags.find((a) => a.startsWith('--settle='))?.slice('--settle='.length) ?? 15);
const SEPARATE_TEMPORAL = flags.includes('--separate-temporal');
const HEAP_SNAPSHOTS = flags.includes('--heap-snapshots');
const LATE_S = Number(flags.find((a) => a.startsWith('--late='))?.slice('--late='.length) ?? 120);
/** `NAME=${NAME:-value}` assignments in package.json's start script: what `npm start` sets for Herald's process. */
function startScriptEnv(): Record<string, string> {
  let dir = __dirname;
  while (!existsSync(path.join(dir, 'package.json'))) dir = path.dirname(dir);
  const script: string = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')).scripts.start;
  return Object.fromEntries([...script.matchAll(/\b(\w+)=\$\{\1:-([^}]*)\}/g)].map((m) => [m[1]!, m[2]!]));
}

const extraEnv = Object.fromEntries(flags.filter((a) => a.startsWith('--env=')).map((a) => a.slice('--env='.length).split(/=(.*)/s).slice(0, 2)));
const nodeFlags = [...flags.filter((a) => a.startsWith('--node-flag=')).map((a) => a.slice('--node-flag='.length)), '--require', path.resolve(__dirname, 'memory-probe.js'), ...(HEAP_SNAPSHOTS ? ['--heapsnapshot-signal=SIGUSR2'] : [])];
const ACCOUNTS = 25;
const CONCURRENCY = 4;
const SPACING_MS = 6 * 60_000;

interface ProcessMemory {
  pid: number;
  name: string;
  rssKiB: number;
  pssKiB: number;
  anonKiB: number;
  /** Shared memory (PostgreSQL's shared buffers), as much of it as this process has touched, shared out. */
  shmemKiB: number;
}

function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

function descendantsOf(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const pid = Number(entry);
      const ppid = parentOf(pid);
      children.set(ppid, [...(children.get(ppid) ?? []), pid]);
    } catch {
      // exited while listing
    }
  }
  const found: number[] = [];
  const visit = (pid: number) => {
    found.push(pid);
    for (const child of children.get(pid) ?? []) visit(child);
  };
  visit(root);
  return found;
}

function memoryOf(pid: number): ProcessMemory | null {
  try {
    const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(rollup)?.[1] ?? 0);
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0+$/, '').split('\0');
    const name = cmdline[0]!.startsWith('postgres:') || cmdline.length === 1 ? cmdline.join(' ').slice(0, 60) : path.basename(cmdline[0]!) + ' ' + cmdline.slice(1).map((a) => path.basename(a)).join(' ').slice(0, 50);
    return { pid, name, rssKiB: field('Rss'), pssKiB: field('Pss'), anonKiB: field('Pss_Anon'), shmemKiB: field('Pss_Shmem') };
  } catch {
    return null;
  }
}

const readTree = (root: number) => descendantsOf(root).map(memoryOf).filter((m): m is ProcessMemory => m !== null);
const sum = (list: ProcessMemory[], key: 'rssKiB' | 'pssKiB' | 'anonKiB' | 'shmemKiB') => list.reduce((total, m) => total + m[key], 0);
const mib = (kib: number) => (kib / 1024).toFixed(1);

function printTree(label: string, list: ProcessMemory[]): void {
  console.log(`\n${label} (${new Date().toISOString().slice(11, 19)}): ${list.length} processes, PSS ${mib(sum(list, 'pssKiB'))} MiB, RSS ${mib(sum(list, 'rssKiB'))} MiB`);
  for (const m of list) {
    console.log(`  ${String(m.pid).padStart(7)}  PSS ${mib(m.pssKiB).padStart(7)} (anon ${mib(m.anonKiB).padStart(7)})  RSS ${mib(m.rssKiB).padStart(7)}  ${m.name}`);
  }
}

const isPostgres = (m: ProcessMemory) => m.name.startsWith('postgres');
/** Client backends (one per connection) are Herald's cost; the rest is the cluster itself. */
const isBackend = (m: ProcessMemory) => /^postgres: \S+ \S+ (127\.0\.0\.1|\[local\])/.test(m.name);

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** CPU seconds (user + system) of the processes in `root`'s tree. */
function cpuSecondsOf(root: number): number {
  let ticks = 0;
  for (const pid of descendantsOf(root)) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // exited
    }
  }
  return ticks / 100;
}

/** Waits until the trees use under 5% of a core over 3 s (at most 4 minutes), then `SETTLE_S` more. */
async function settle(roots: number[]): Promise<void> {
  const started = Date.now();
  for (;;) {
    const before = roots.reduce((total, pid) => total + cpuSecondsOf(pid), 0);
    await sleep(3000);
    const used = roots.reduce((total, pid) => total + cpuSecondsOf(pid), 0) - before;
    if (used < 0.15 || Date.now() - started > 240_000) break;
  }
  const seconds = (Date.now() - started) / 1000;
  console.log(`${seconds > 240 ? 'NOT quiet (still busy) after' : 'quiet after'} ${seconds.toFixed(0)} s; then ${SETTLE_S} s more`);
  await sleep(SETTLE_S * 1000);
}

/** With `--heap-snapshots`: SIGUSR2 to each node process, then time for the snapshot to be written. */
async function snapshotHeaps(roots: number[]): Promise<void> {
  if (!HEAP_SNAPSHOTS) return;
  for (const pid of roots) process.kill(pid, 'SIGUSR2');
  await sleep(60_000);
}

async function startTemporalDev(): Promise<{ child: ChildProcess; address: string }> {
  const port = 17_233 + Math.floor(Math.random() * 1000);
  const child = spawn(process.execPath, [...nodeFlags, path.resolve(__dirname, '..', 'temporal-dev', 'main.js'), '--port', String(port)], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
  await new Promise<void>((ready, fail) => {
    child.stderr!.on('data', (chunk: Buffer) => chunk.toString().includes('listening') && ready());
    child.once('exit', (code) => fail(new Error(`temporal-dev exited with ${code}`)));
  });
  return { child, address: `127.0.0.1:${port}` };
}

/**
 * Herald's release of memory after start-up (src/process/memory-release.ts, at its first quiet check): the idle
 * reading waits for it, so that idle is the same in every run (it was read before or after it, by chance: 174 or
 * 210 MiB PSS).
 */
let startUpReleased = () => {};
const releasedAfterStartUp = new Promise<void>((resolve) => (startUpReleased = resolve));
/**
 * Its release after the burst of scheduling, likewise: the reading after the burst waits for it (up to a minute), as
 * it was read a second before or after it by chance (+4.3 or +20.8 MiB PSS per 1,000 in two runs of the same code).
 */
let burstReleased = () => {};
const releasedAfterBurst = new Promise<void>((resolve) => (burstReleased = resolve));

async function startHeraldProcess(dataDir: string, temporalAddress?: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [...nodeFlags, path.resolve(__dirname, '..', 'src', 'main.js')], {
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'production',
      PORT: '0',
      HERALD_DATA_DIR: dataDir,
      HERALD_ENCRYPTION_KEY: testEncryptionKey,
      // Production mode requires one; nothing of this bench fetches media by URL.
      HERALD_PUBLIC_URL: 'https://herald.invalid',
      HERALD_WEB_UI: WEB_UI ? 'true' : 'false',
      HERALD_WEB_UI_PORT: '0',
      LOG_LEVEL: 'info',
      ...(temporalAddress ? { TEMPORAL_ADDRESS: temporalAddress } : {}),
      ...startScriptEnv(),
      ...extraEnv,
    },
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let buffered = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 1);
        if (line.includes('"herald listening"')) resolve((JSON.parse(line) as { url: string }).url);
        // When Herald gave memory back (src/process/memory-release.ts), to read the figures against.
        if (line.includes('"memory released after')) {
          console.log(`herald: ${line}`);
          startUpReleased(); // the first one is start-up's
          if (line.includes('"memory released after a burst"')) burstReleased();
        }
      }
    });
    child.once('exit', (code) => reject(new Error(`herald exited with ${code} during start`)));
  });
  return { child, url };
}

function clusterUrl(dataDir: string): string {
  const password = readFileSync(path.join(dataDir, 'postgres.password'), 'utf8').trim();
  const port = Number(readFileSync(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[3]);
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/herald`;
}

/**
 * PostgreSQL's shared buffers that hold a page, in KiB (`pg_buffercache`, created in the bench's throwaway cluster):
 * resident whichever process touched them. PSS counts a shared page only in the live processes that mapped it, so a
 * burst's rows read by a pool backend that has since exited vanish from PSS while they stay in memory; the figure
 * "shared buffers counted whole" puts them back. Read through a connection of its own, closed again at once.
 */
async function sharedBuffersInUseKiB(dataDir: string): Promise<number> {
  const client = new pg.Client({ connectionString: clusterUrl(dataDir), application_name: 'bench-memory-buffers' });
  await client.connect();
  try {
    await client.query('create extension if not exists pg_buffercache');
    const kib = `(count(*) * current_setting('block_size')::int / 1024)::int`;
    const { rows } = await client.query<{ kib: number }>(`select ${kib} as kib from pg_buffercache where relfilenode is not null`);
    if (process.env.HERALD_BENCH_BUFFERS_BY_RELATION) {
      const { rows: relations } = await client.query<{ relation: string; kib: number }>(
        `select coalesce(c.relname, b.relfilenode::text) as relation, ${kib} as kib
           from pg_buffercache b left join pg_class c on c.relfilenode = b.relfilenode and b.reldatabase = (select oid from pg_database where datname = current_database())
          where b.relfilenode is not null group by 1 order by 2 desc limit 25`,
      );
      console.log(`shared buffers by relation: ${relations.map((r) => `${r.relation} ${r.kib}`).join(', ')}`);
    }
    return rows[0]!.kib;
  } finally {
    await client.end();
  }
}

async function startBare(databaseUrl: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [path.resolve(__dirname, 'memory-bare.js'), databaseUrl], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const port = await new Promise<number>((resolve) => child.once('message', (m: { port: number }) => resolve(m.port)));
  await fetch(`http://127.0.0.1:${port}/${randomUUID()}`);
  return child;
}

async function schedulePosts(url: string, apiKey: string, accountIds: string[]): Promise<number> {
  const requests = Math.ceil(POSTS / accountIds.length);
  const firstAt = Date.now() + 7 * 24 * 3600_000;
  let next = 0;
  let created = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < requests) {
        const i = next++;
        const ids = accountIds.slice(0, Math.min(accountIds.length, POSTS - i * accountIds.length));
        const res = await fetch(`${url}/api/v1/posts`, {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ account_ids: ids, text: `memory bench post ${i}`, schedule_at: new Date(firstAt + i * SPACING_MS).toISOString() }),
        });
        const body = await res.text();
        if (res.status !== 201 && res.status !== 200) throw new Error(`schedule ${i}: ${res.status} ${body.slice(0, 300)}`);
        created += ids.length;
      }
    }),
  );
  return created;
}

async function main(): Promise<void> {
  const deadlineMs = 13 * 60_000 + LATE_S * 1000 + (HEAP_SNAPSHOTS ? 3 * 60_000 : 0); // 15 minutes with the default --late
  const deadline = setTimeout(() => {
    console.error(`bench/memory: over ${Math.round(deadlineMs / 60_000)} minutes, giving up`);
    process.exit(1);
  }, deadlineMs);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'herald-memory-'));
  const temporal = SEPARATE_TEMPORAL ? await startTemporalDev() : undefined;
  const { child: herald, url } = await startHeraldProcess(dataDir, temporal?.address);
  const roots = [herald.pid!, ...(temporal ? [temporal.child.pid!] : [])];
  const readHerald = () => roots.flatMap(readTree);
  const nodeProcesses = [{ label: temporal ? 'API + worker' : 'API + worker + temporal-dev', child: herald }, ...(temporal ? [{ label: 'temporal-dev', child: temporal.child }] : [])];
  const breakdowns: Array<{ name: string; list: NodeBreakdown[] }> = [];
  const readBreakdowns = async (name: string) => breakdowns.push({ name, list: await Promise.all(nodeProcesses.map((p) => breakdownOf(p.label, p.child))) });
  let bare: ChildProcess | undefined;
  try {
    console.log(`Herald's process: env ${JSON.stringify({ ...startScriptEnv(), ...extraEnv })} (npm start's, then --env), node ${nodeFlags.join(' ')}`);
    console.log(`Herald at ${url} (Web UI ${WEB_UI ? 'on' : 'off'}${temporal ? ', temporal-dev in its own process' : ''}), data dir ${dataDir}`);
    await Promise.race([releasedAfterStartUp, sleep(60_000)]);
    await settle(roots);
    const idle = readHerald();
    const idleBuffersKiB = await sharedBuffersInUseKiB(dataDir);
    await readBreakdowns('idle');
    await snapshotHeaps(roots);
    printTree('Herald idle after start', idle);

    const database = openDatabase(clusterUrl(dataDir), { max: 2, applicationName: 'bench-memory' });
    const user = await createUser(database.db, { plan: 'enterprise' });
    await setPlan(database.db, user.id, 'enterprise', { scheduled_quota: POSTS * 2, post_quota: POSTS * 2 });
    const { apiKey } = await createApiKey(database.db, { userId: user.id, name: 'bench', scopes: null, expiresAt: null });
    const accountIds: string[] = [];
    for (let i = 0; i < ACCOUNTS; i++) {
      const account = await insertAccount(database.db, user.id, {
        platform: 'x',
        platform_account_id: `bench-${i}`,
        username: `bench${i}`,
        premium: false,
        own_credentials: false,
        timezone: null,
        credentials: { access_token: `token-${randomUUID()}` },
        settings: { user_id: `bench-${i}`, username: `bench${i}` },
      });
      accountIds.push(account.id);
    }
    bare = await startBare(clusterUrl(dataDir));
    const { rows: bareBackends } = await database.pool.query<{ pid: number }>(`select pid from pg_stat_activity where application_name = 'bench-bare'`);
    await database.close();
    // The bare process's own backend (a child of the postmaster, so in Herald's tree), known by its application_name.
    const heraldOnly = (list: ProcessMemory[]) => list.filter((m) => !bareBackends.some((b) => b.pid === m.pid));
    await sleep(1000);
    const bareTree = [...readTree(bare.pid!), ...bareBackends.map((b) => memoryOf(b.pid)).filter((m): m is ProcessMemory => m !== null)];

    const started = performance.now();
    const created = await schedulePosts(url, apiKey, accountIds);
    const seconds = (performance.now() - started) / 1000;
    console.log(`\nscheduled ${created} posts (${Math.ceil(POSTS / ACCOUNTS)} fan-outs of ${ACCOUNTS}) in ${seconds.toFixed(1)} s`);
    await Promise.race([releasedAfterBurst, sleep(60_000)]);
    await settle(roots);
    const waiting = heraldOnly(readHerald());
    const waitingBuffersKiB = await sharedBuffersInUseKiB(dataDir);
    await readBreakdowns('waiting');
    await snapshotHeaps(roots);
    printTree(`Herald with ${created} posts waiting`, waiting);
    let late: ProcessMemory[] | undefined;
    let lateBuffersKiB = 0;
    if (LATE_S > 0) {
      await sleep(LATE_S * 1000);
      late = heraldOnly(readHerald());
      lateBuffersKiB = await sharedBuffersInUseKiB(dataDir);
      await readBreakdowns(`+${LATE_S} s`);
      await snapshotHeaps(roots);
      printTree(`Herald with ${created} posts waiting, ${LATE_S} s later`, late);
    }

    printTree('Baseline: bare node:http + pg process', bareTree);
    const cluster = idle.filter((m) => isPostgres(m) && !isBackend(m));
    printTree('Baseline: the PostgreSQL cluster alone (no client backends), idle', cluster);

    const idlePss = sum(heraldOnly(idle), 'pssKiB');
    const waitingPss = sum(heraldOnly(waiting), 'pssKiB');
    const idleRss = sum(heraldOnly(idle), 'rssKiB');
    const waitingRss = sum(heraldOnly(waiting), 'rssKiB');
    const node = (list: ProcessMemory[], key: 'pssKiB' | 'anonKiB' = 'pssKiB') => sum(list.filter((m) => !isPostgres(m)), key);
    const perThousand = (kib: number) => ((kib / 1024) * 1000) / created;
    console.log('\n| Figure | PSS MiB | RSS MiB | processes |');
    console.log('|---|---|---|---|');
    console.log(`| Herald idle after start | ${mib(idlePss)} | ${mib(idleRss)} | ${heraldOnly(idle).length} |`);
    console.log(`| ... of which node (API, worker, temporal-dev); anonymous | ${mib(node(idle))}; ${mib(node(idle, 'anonKiB'))} | | |`);
    console.log(`| Herald, ${created} waiting | ${mib(waitingPss)} | ${mib(waitingRss)} | ${heraldOnly(waiting).length} |`);
    console.log(`| ... of which node; anonymous | ${mib(node(waiting))}; ${mib(node(waiting, 'anonKiB'))} | | |`);
    console.log(`| Per 1,000 waiting posts | +${perThousand(waitingPss - idlePss).toFixed(1)} | +${perThousand(waitingRss - idleRss).toFixed(1)} | |`);
    console.log(`| ... of which node | +${perThousand(node(waiting) - node(idle)).toFixed(1)} | | |`);
    if (late) {
      console.log(`| Herald, ${LATE_S} s later | ${mib(sum(late, 'pssKiB'))} | ${mib(sum(late, 'rssKiB'))} | ${late.length} |`);
      console.log(`| Per 1,000 waiting posts, ${LATE_S} s later | +${perThousand(sum(late, 'pssKiB') - idlePss).toFixed(1)} | +${perThousand(sum(late, 'rssKiB') - idleRss).toFixed(1)} | |`);
      console.log(`| ... of which node | +${perThousand(node(late) - node(idle)).toFixed(1)} | | |`);
    }
    // PostgreSQL's shared memory as the buffers holding a page, not as the share of them live processes mapped.
    const wholeBuffers = (list: ProcessMemory[], buffersKiB: number) => sum(list, 'pssKiB') - sum(list.filter(isPostgres), 'shmemKiB') + buffersKiB;
    const idleWhole = wholeBuffers(heraldOnly(idle), idleBuffersKiB);
    console.log(`| Per 1,000 waiting posts, PostgreSQL's shared buffers counted whole (${mib(idleBuffersKiB)} → ${mib(waitingBuffersKiB)}${late ? ` → ${mib(lateBuffersKiB)}` : ''} MiB holding pages) | +${perThousand(wholeBuffers(waiting, waitingBuffersKiB) - idleWhole).toFixed(1)}${late ? `; ${LATE_S} s later +${perThousand(wholeBuffers(late, lateBuffersKiB) - idleWhole).toFixed(1)}` : ''} | | |`);
    console.log(`| Baseline: bare node:http + pg (process + its backend) | ${mib(sum(bareTree, 'pssKiB'))} | ${mib(sum(bareTree, 'rssKiB'))} | ${bareTree.length} |`);
    console.log(`| Baseline: PostgreSQL cluster alone | ${mib(sum(cluster, 'pssKiB'))} | ${mib(sum(cluster, 'rssKiB'))} | ${cluster.length} |`);
    nodeProcesses.forEach((p, i) =>
      printBreakdowns(`Breakdown: ${p.label} (node process)`, breakdowns.map((b) => ({ name: b.name, breakdown: b.list[i]! })), created),
    );
    console.log(`\nload average: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
  } finally {
    clearTimeout(deadline);
    bare?.kill();
    herald.kill('SIGTERM');
    await new Promise((done) => herald.once('exit', done));
    temporal?.child.kill();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
