import type pg from 'pg';
import { openDatabase } from '../src/db';
import { ensureDatabase, startEmbeddedPostgres } from '../src/db/embedded';
import { migrateToLatest } from '../src/db/migrate';

/** `HERALD_BENCH_PG_STATS=1`: the benches load pg_stat_statements and print what PostgreSQL ran. */
export const statementStatsWanted = process.env.HERALD_BENCH_PG_STATS === '1';

/**
 * An embedded cluster in `dataDir` with a migrated `bench` database; with `statementStatsWanted`, pg_stat_statements
 * preloaded (a restart) and created in it.
 */
export async function startBenchDatabase(dataDir: string, statementStats = statementStatsWanted) {
  let cluster = await startEmbeddedPostgres({ dataDir });
  if (statementStats) {
    const admin = openDatabase(cluster.url('postgres'));
    await admin.pool.query(`alter system set shared_preload_libraries = 'pg_stat_statements'`);
    // Planning time too: a statement built per call is planned per call.
    await admin.pool.query(`alter system set pg_stat_statements.track_planning = on`);
    await admin.close();
    await cluster.stop();
    cluster = await startEmbeddedPostgres({ dataDir });
  }
  await ensureDatabase(cluster.url('postgres'), 'bench');
  const databaseUrl = cluster.url('bench');
  const database = openDatabase(databaseUrl);
  await migrateToLatest(database.db);
  if (statementStats) await database.pool.query('create extension if not exists pg_stat_statements');
  return { cluster, databaseUrl, database };
}

/** What PostgreSQL ran since the last `pg_stat_statements_reset()`, per publish, most frequent first. */
export async function statementsPer(pool: pg.Pool, publishes: number) {
  const { rows } = await pool.query<{ calls: string; plans: string; total_ms: number; plan_ms: number; query: string }>(
    `select calls::text, plans::text, total_exec_time as total_ms, total_plan_time as plan_ms, left(regexp_replace(query, '\\s+', ' ', 'g'), 140) as query
     from pg_stat_statements where query not like '%pg_stat_statements%' order by calls desc limit 25`,
  );
  const perPublish = rows.map((r) => ({
    per_publish: Number((Number(r.calls) / publishes).toFixed(2)),
    exec_ms_per_publish: Number((r.total_ms / publishes).toFixed(3)),
    plans_per_call: Number((Number(r.plans) / Math.max(1, Number(r.calls))).toFixed(2)),
    plan_ms_per_publish: Number((r.plan_ms / publishes).toFixed(3)),
    query: r.query,
  }));
  return { total_per_publish: Number(perPublish.reduce((a, r) => a + r.per_publish, 0).toFixed(2)), statements: perPublish.filter((r) => r.per_publish >= 0.05) };
}
