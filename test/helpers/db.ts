/**
 * Test database helper: one real embedded PostgreSQL cluster per test run (started lazily on first use, in a
 * temporary directory), and fresh databases in it migrated with the real migrations.
 *
 *   testDatabase(): Promise<TestDatabase>
 *     The run's shared database (created and migrated once per mocha process). Tests isolate themselves by creating
 *     their own users (see test/helpers/api.ts), so sharing it is safe.
 *   createTestDatabase(options?: { migrate?: boolean }): Promise<TestDatabase>
 *     Another fresh database in the same cluster, for tests that need an empty or unmigrated schema.
 *   The cluster is stopped and its directory removed by a root `after` hook, registered when this file is loaded
 *   under mocha.
 *
 *   interface TestDatabase { url: string; name: string; db: Kysely<Database>; pool: pg.Pool; close(): Promise<void> }
 */
import { mkdtemp, rm, chmod } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type DatabaseHandle, openDatabase } from '../../src/db';
import { type EmbeddedCluster, ensureDatabase, startEmbeddedPostgres } from '../../src/db/embedded';
import { migrateToLatest } from '../../src/db/migrate';

export interface TestDatabase extends DatabaseHandle {
  url: string;
  name: string;
}

let cluster: Promise<{ cluster: EmbeddedCluster; dir: string }> | undefined;
let shared: Promise<TestDatabase> | undefined;
const opened: TestDatabase[] = [];
let counter = 0;

function startCluster() {
  cluster ??= (async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'herald-test-pg-'));
    // The server runs as the `postgres` user when tests run as root; it must reach the directory.
    await chmod(dir, 0o755);
    return { cluster: await startEmbeddedPostgres({ dataDir: dir }), dir };
  })();
  return cluster;
}

export async function createTestDatabase(options: { migrate?: boolean } = {}): Promise<TestDatabase> {
  const { cluster: running } = await startCluster();
  const name = `herald_test_${process.pid}_${++counter}`;
  await ensureDatabase(running.url('postgres'), name);
  const url = running.url(name);
  const handle = openDatabase(url, { max: 20, applicationName: 'herald-test' });
  if (options.migrate !== false) await migrateToLatest(handle.db);
  const database = { ...handle, url, name };
  opened.push(database);
  return database;
}

export function testDatabase(): Promise<TestDatabase> {
  shared ??= createTestDatabase();
  return shared;
}

async function stopTestCluster(): Promise<void> {
  if (!cluster) return;
  const started = cluster;
  cluster = undefined;
  shared = undefined;
  await Promise.all(opened.splice(0).map((database) => database.close().catch(() => undefined)));
  const { cluster: running, dir } = await started;
  await running.stop();
  await rm(dir, { recursive: true, force: true });
}

if (typeof after === 'function') {
  after(async function () {
    this.timeout(30_000);
    await stopTestCluster();
  });
}
