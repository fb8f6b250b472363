import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from '../logger';
import { packageRoot } from '../package-root';
import { isAlive } from '../process/is-alive';

/**
 * The Temporal Web UI for the embedded Temporal server: `temporal-ui/` is a SvelteKit shell around `@temporalio/ui`
 * with its own package and lock file (its tool chain never enters Herald's dependencies), built into static files
 * on first start and again whenever its sources or lock file change. Nothing built is committed.
 *
 * The build goes to `build-next/` and replaces `build/` in one rename, so a server already serving `build/` never
 * sees half a build; a lock directory keeps two processes (a test run and `npm start`) from building at once.
 */

/** `temporal-ui/` of the checkout this compiled file lives in (dist/ or any other out dir). */
const webUiDir = path.join(packageRoot, 'temporal-ui');
export const webUiBuildDir = path.join(webUiDir, 'build');

const STAMP_FILE = '.herald-build-stamp';
const INSTALL_STAMP = path.join('node_modules', '.herald-lock-hash');
const SOURCES = ['package.json', 'package-lock.json', 'svelte.config.js', 'vite.config.js', 'tailwind.config.js', 'postcss.config.js', 'src'];
/** A lock older than this belongs to a build that died. */
const STALE_LOCK_MS = 15 * 60_000;

function hashOf(files: readonly string[]): string {
  const hash = createHash('sha256');
  const visit = (relative: string) => {
    const full = path.join(webUiDir, relative);
    const stat = statSync(full, { throwIfNoEntry: false });
    if (!stat) return;
    if (stat.isDirectory()) {
      for (const entry of readdirSync(full).sort()) visit(path.join(relative, entry));
      return;
    }
    hash.update(relative).update('\0').update(readFileSync(full)).update('\0');
  };
  files.forEach(visit);
  return hash.digest('hex');
}

function readStamp(file: string): string | null {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return null;
  }
}

/** True when `build/` holds a build of the current sources. */
export function webUiIsBuilt(): boolean {
  return readStamp(path.join(webUiBuildDir, STAMP_FILE)) === hashOf(SOURCES);
}

/** A build step, killed when `signal` aborts (the service stopping): a build left running would race the next start's. */
function run(command: string, args: string[], env: NodeJS.ProcessEnv, logger: Logger, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new Error('the Web UI build was stopped'));
    const child = spawn(command, args, { cwd: webUiDir, env, stdio: ['ignore', 'pipe', 'pipe'], signal, killSignal: 'SIGTERM' });
    let output = '';
    const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) return resolve();
      if (signal?.aborted) return reject(new Error('the Web UI build was stopped'));
      logger.error({ command: [command, ...args].join(' '), output }, 'Temporal Web UI build step failed');
      reject(new Error(`${command} ${args.join(' ')} exited with ${code}`));
    });
  });
}

/** A lock is stale when its builder died (Ctrl-C during a first start) or it is very old. */
function lockIsStale(lock: string): boolean {
  const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? 0);
  const pid = Number(readStamp(path.join(lock, 'pid')));
  return age > STALE_LOCK_MS || (Number.isInteger(pid) && pid > 0 && !isAlive(pid)) || (!pid && age > 10_000);
}

async function withLock<T>(fn: () => Promise<T>): Promise<T> {
  const lock = path.join(webUiDir, '.building');
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(path.join(lock, 'pid'), String(process.pid));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      if (lockIsStale(lock)) rmSync(lock, { recursive: true, force: true });
      else await new Promise((r) => setTimeout(r, 1_000));
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/**
 * Builds the UI unless `build/` is current: `npm ci` in `temporal-ui/` when its lock file changed since the last
 * install, then `vite build`. Resolves with the directory to serve.
 */
export async function ensureWebUiBuilt(logger: Logger, signal?: AbortSignal): Promise<string> {
  if (webUiIsBuilt()) return webUiBuildDir;
  return withLock(async () => {
    if (webUiIsBuilt()) return webUiBuildDir; // another process built it while we waited
    const started = Date.now();
    logger.info({ dir: webUiDir }, 'building the Temporal Web UI (first start or changed sources; about a minute)');
    const env = { ...process.env, NODE_ENV: 'production' };
    const lockHash = hashOf(['package-lock.json']);
    if (readStamp(path.join(webUiDir, INSTALL_STAMP)) !== lockHash) {
      await run('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error', '--include=dev'], env, logger, signal);
      writeFileSync(path.join(webUiDir, INSTALL_STAMP), lockHash);
    }
    const next = path.join(webUiDir, 'build-next');
    rmSync(next, { recursive: true, force: true });
    const stamp = hashOf(SOURCES);
    await run(process.execPath, [path.join(webUiDir, 'node_modules', 'vite', 'bin', 'vite.js'), 'build'], { ...env, HERALD_UI_OUT: 'build-next' }, logger, signal);
    if (!existsSync(path.join(next, 'index.html'))) throw new Error('the Web UI build produced no index.html');
    writeFileSync(path.join(next, STAMP_FILE), stamp);
    const old = path.join(webUiDir, 'build-old');
    rmSync(old, { recursive: true, force: true });
    if (existsSync(webUiBuildDir)) renameSync(webUiBuildDir, old);
    renameSync(next, webUiBuildDir);
    rmSync(old, { recursive: true, force: true });
    logger.info({ ms: Date.now() - started }, 'Temporal Web UI built');
    return webUiBuildDir;
  });
}

/** Where the embedded server's Web UI answers (as configured), or null when it is off or on an unknown port. */
export async function runningWebUiUrl(config: { temporal: { address: string | null }; webUi: { enabled: boolean; port: number; host: string } }): Promise<string | null> {
  if (config.temporal.address !== null || !config.webUi.enabled || config.webUi.port === 0) return null;
  const host = config.webUi.host === '0.0.0.0' ? '127.0.0.1' : config.webUi.host.includes(':') ? `[${config.webUi.host}]` : config.webUi.host;
  const url = `http://${host}:${config.webUi.port}`;
  try {
    const res = await fetch(`${url}/api/v1/settings`, { signal: AbortSignal.timeout(2_000) });
    return res.ok ? url : null;
  } catch {
    return null;
  }
}

/**
 * The UI's workflow list filtered to the workflow that publishes this post: a thread part's by its ThreadId (a long
 * thread's workflow lists only its first parts in PostId, `search-attributes.ts`), any other post's by its PostId.
 */
export function webUiPostLink(url: string, namespace: string, post: { id: string; thread_id?: string | null }): string {
  const query = post.thread_id ? `ThreadId = '${post.thread_id}'` : `PostId = '${post.id}'`;
  return `${url}/namespaces/${encodeURIComponent(namespace)}/workflows?query=${encodeURIComponent(query)}`;
}

/**
 * The UI is served as soon as it is built: at once when `temporal-ui/build` is current, otherwise after a build in
 * the background (the API does not wait for it; until then the UI's port answers that it is being built).
 */
export function announceWebUi(url: string, logger: Logger, signal: AbortSignal): void {
  ensureWebUiBuilt(logger, signal).then(
    () => logger.info({ url }, `Temporal Web UI at ${url}`),
    (err) => {
      if (signal.aborted) logger.info({ url }, 'the Temporal Web UI build was stopped with the service; the next start builds it');
      else logger.error({ err, url }, 'the Temporal Web UI could not be built; the API runs without it');
    },
  );
}
