// What one immediate publish writes in PostgreSQL (issue 15): every statement, every row, every index entry and the
// WAL bytes, summed over N publishes through Herald's API and worker (bench/posts-server.ts `herald`, as `npm start`
// runs them) against the x stand-in, then divided by N. Read from pg_stat_statements (calls, rows, WAL per statement),
// pg_walinspect (each WAL record by relation and kind: a heap insert or update, a HOT update, a B-tree entry, a
// commit) and pg_stat_user_tables (rows inserted, updated, HOT-updated, deleted). The bare handler's publish (one
// insert, one update) is read the same way beside it. Not a timing: the counts are the figure.
// Usage: node <out>/bench/publish-writes.js [publishes=300] [clients=8]
import { fork, type ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type pg from 'pg';
import { createApiKey } from '../src/auth/api-keys';
import { createUser } from '../src/users/users';
import { insertXAccount } from '../test/posts/fixtures';
import { startXStandIn } from '../test/standins/x';
import { startBenchDatabase } from './bench-database';
import { freePort, startTemporalDev } from './temporal-dev-process';

const [PUBLISHES = 300, CLIENTS = 8] = process.argv.slice(2).map(Number);

const children: ChildProcess[] = [];
process.on('exit', () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
});

async function startSide(args: string[]): Promise<{ child: ChildProcess; port: number }> {
  const child = fork(path.join(__dirname, 'posts-server.js'), args, { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  children.push(child);
  const port = await new Promise<number>((ready, fail) => {
    child.once('message', (message: { port: number }) => ready(message.port));
    child.once('exit', (code) => fail(new Error(`${args[0]} server exited with ${code}`)));
  });
  return { child, port };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
function post(port: number, pathname: string, key: string | null, body: unknown): Promise<void> {
  const payload = JSON.stringify(body);
  const headers: Record<string, string> = { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) };
  if (key) headers.authorization = `Bearer ${key}`;
  return new Promise((done, fail) => {
    const req = http.request({ host: '127.0.0.1', port, path: pathname, method: 'POST', agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => (res.statusCode === 201 ? done() : fail(new Error(`${pathname}: ${res.statusCode} ${Buffer.concat(chunks).toString().slice(0, 300)}`))));
    });
    req.on('error', fail);
    req.end(payload);
  });
}

async function drive(send: (client: number, i: number) => Promise<void>, publishes: number, clients: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      while (next < publishes) await send(client, next++);
    }),
  );
}

const pause = (ms: number) => new Promise((done) => setTimeout(done, ms));
const per = (n: number | string, publishes: number) => Number((Number(n) / publishes).toFixed(2));

interface Snapshot {
  lsn: string;
  tables: Map<string, { ins: number; upd: number; hot: number; del: number }>;
}

async function snapshot(pool: pg.Pool): Promise<Snapshot> {
  await pool.query('select pg_stat_clear_snapshot()');
  const { rows } = await pool.query<{ relname: string; ins: string; upd: string; hot: string; del: string }>(
    `select relname, n_tup_ins as ins, n_tup_upd as upd, n_tup_hot_upd as hot, n_tup_del as del from pg_stat_user_tables`,
  );
  const lsn = (await pool.query<{ lsn: string }>('select pg_current_wal_insert_lsn()::text as lsn')).rows[0]!.lsn;
  return { lsn, tables: new Map(rows.map((r) => [r.relname, { ins: Number(r.ins), upd: Number(r.upd), hot: Number(r.hot), del: Number(r.del) }])) };
}

/** Everything written between two snapshots, per publish. */
async function inventory(pool: pg.Pool, before: Snapshot, publishes: number) {
  // Table counters reach the shared statistics when a backend flushes them: at most every 10 s while idle.
  await pause(11_000);
  const after = await snapshot(pool);
  const range = [before.lsn, after.lsn];
  const { rows: statements } = await pool.query<{ calls: string; rows: string; wal_records: string; wal_fpi: string; wal_bytes: string; query: string }>(
    `select calls::text, rows::text, wal_records::text, wal_fpi::text, wal_bytes::text, left(regexp_replace(query, '\\s+', ' ', 'g'), 160) as query
     from pg_stat_statements where query not like '%pg_stat%' and query not like '%pg_get_wal%' order by calls desc`,
  );
  const { rows: wal } = await pool.query<{ bytes: string; fpi_bytes: string; records: string }>(
    `select sum(record_length)::text as bytes, sum(fpi_length)::text as fpi_bytes, count(*)::text as records from pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn)`,
    range,
  );
  const { rows: kinds } = await pool.query<{ kind: string; records: string; bytes: string }>(
    `select resource_manager || ' ' || split_part(record_type, ' ', 1) as kind, count(*)::text as records, sum(record_length)::text as bytes
     from pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn) group by 1 order by count(*) desc`,
    range,
  );
  // One row per WAL record and relation it touched (an update moving a row to another page names the heap twice).
  const { rows: relations } = await pool.query<{ relation: string; kind: string; records: string; bytes: string }>(
    `with blocks as (
       select distinct on (start_lsn, relfilenode) start_lsn, relfilenode, reltablespace, resource_manager, record_type, record_length
       from pg_get_wal_block_info($1::pg_lsn, $2::pg_lsn) where relforknumber = 0
     )
     select coalesce(pg_filenode_relation(case when reltablespace = (select oid from pg_tablespace where spcname = 'pg_default') then 0 else reltablespace end, relfilenode)::text, relfilenode::text) as relation,
            resource_manager || ' ' || split_part(record_type, ' ', 1) as kind, count(*)::text as records, sum(record_length)::text as bytes
     from blocks group by 1, 2 order by 1, count(*) desc`,
    range,
  );
  const tables = [...after.tables]
    .map(([name, a]) => {
      const b = before.tables.get(name) ?? { ins: 0, upd: 0, hot: 0, del: 0 };
      return { table: name, inserted: per(a.ins - b.ins, publishes), updated: per(a.upd - b.upd, publishes), hot: per(a.hot - b.hot, publishes), deleted: per(a.del - b.del, publishes) };
    })
    .filter((t) => t.inserted + t.updated + t.deleted > 0);
  const byRelation = relations.map((r) => ({ relation: r.relation, kind: r.kind, per_publish: per(r.records, publishes), bytes: per(r.bytes, publishes) }));
  // Herald's own tables and indexes, without the catalogs (autovacuum's statistics land in the window now and then).
  const own = byRelation.filter((r) => !r.relation.startsWith('pg_'));
  const sum = (rows: typeof own) => Number(rows.reduce((a, r) => a + r.per_publish, 0).toFixed(2));
  return {
    own_relations: {
      wal_bytes: Math.round(own.reduce((a, r) => a + r.bytes, 0)),
      wal_records: sum(own),
      index_entries: sum(own.filter((r) => r.kind.startsWith('Btree INSERT'))),
    },
    wal_bytes_per_publish: per(wal[0]!.bytes ?? 0, publishes),
    wal_bytes_without_full_pages: per(Number(wal[0]!.bytes ?? 0) - Number(wal[0]!.fpi_bytes ?? 0), publishes),
    wal_records_per_publish: per(wal[0]!.records, publishes),
    statements: statements
      .map((s) => ({ per_publish: per(s.calls, publishes), rows: per(s.rows, publishes), wal_records: per(s.wal_records, publishes), wal_bytes: per(s.wal_bytes, publishes), query: s.query }))
      .filter((s) => s.per_publish >= 0.02),
    rows_by_table: tables,
    wal_by_kind: kinds.map((k) => ({ kind: k.kind, per_publish: per(k.records, publishes), bytes: per(k.bytes, publishes) })).filter((k) => k.per_publish >= 0.02),
    wal_by_relation: byRelation.filter((r) => r.per_publish >= 0.02),
  };
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'herald-bench-writes-'));
  await chmod(dataDir, 0o755);
  const { cluster, databaseUrl, database } = await startBenchDatabase(dataDir, true);
  await database.pool.query('create extension if not exists pg_walinspect');
  const x = await startXStandIn();
  const user = await createUser(database.db, { plan: 'enterprise' });
  const account = await insertXAccount(database.db, user.id, x);
  const keys = await Promise.all(Array.from({ length: CLIENTS }, async () => (await createApiKey(database.db, { userId: user.id, name: 'bench', scopes: null, expiresAt: null })).apiKey));
  const temporalPort = await freePort();
  const temporalDev = await startTemporalDev(temporalPort);
  children.push(temporalDev);
  const herald = await startSide(['herald', databaseUrl, x.origin, `127.0.0.1:${temporalPort}`]);
  const bare = await startSide(['bare', databaseUrl, x.origin, account.id]);

  const runId = Date.now();
  const heraldSend = (c: number, i: number) => post(herald.port, '/api/v1/posts', keys[c]!, { account_id: account.id, text: `herald ${runId} ${c} ${i}` });
  const bareSend = (c: number, i: number) => post(bare.port, '/', null, { text: `bare ${runId} ${c} ${i}` });
  const result: Record<string, unknown> = { publishes: PUBLISHES, clients: CLIENTS };
  for (const [name, send] of [['herald', heraldSend], ['bare', bareSend]] as const) {
    await drive((c, i) => send(c, -1 - i), 5 * CLIENTS, CLIENTS); // warm-up: caches, named statements, leases
    await pause(11_000); // the warm-up's counters flushed before the first snapshot
    await database.pool.query('select pg_stat_statements_reset()');
    const before = await snapshot(database.pool);
    await drive(send, PUBLISHES, CLIENTS);
    await pause(1_000); // trailing work (the events' dispatch, the workflow's close)
    result[name] = await inventory(database.pool, before, PUBLISHES);
  }
  console.log(JSON.stringify(result, null, 2));

  for (const child of children) child.kill('SIGTERM');
  await x.stop();
  await database.close();
  await cluster.stop();
  await rm(dataDir, { recursive: true, force: true });
  process.exit(0);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
