import { openDatabase } from '../src/db';
import { ensureDatabase, startEmbeddedPostgres } from '../src/db/embedded';
import { migrateToLatest } from '../src/db/migrate';

/** `HERALD_BENCH_PG_STATS=1`: the benches load pg_stat_statements and print what PostgreSQL ran. */
export const statementStatsWanted = process.env.HERALD_BENCH_PG_STATS === '1';

/**
 * An embedded cluster in `dataDir` with a migrated `bench` database; with `statementStatsWanted`, pg_stat_statements
 * preloaded (a restart) and created in it.
 */
export async function startBenchDatabase(dataDir: string) {
  let cluster = await startEmbeddedPostgres({ dataDir });
  if (statementStatsWanted) {
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
  if (statementStatsWanted) await database.pool.query('create extension if not exists pg_stat_statements');
  return { cluster, databaseUrl, database };
}
