// The one way workflow tests get a Temporal server. By default our own temporal-dev server (temporal-dev/),
// which needs no download; with TEMPORAL_TEST_SERVER=download, Temporal's real test server / dev server that
// @temporalio/testing downloads, so the same suites compare the two on a machine with internet access.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, makeTelemetryFilterString, Runtime } from '@temporalio/worker';
import { historyDictionaries } from '../../src/temporal/history-dictionaries';
import { startServer } from '../../temporal-dev';

type TemporalServerKind = 'temporal-dev' | 'download';

/** Which server the workflow tests run against (TEMPORAL_TEST_SERVER=download selects Temporal's own). */
export const temporalServerKind: TemporalServerKind = process.env.TEMPORAL_TEST_SERVER === 'download' ? 'download' : 'temporal-dev';

/** Thrown when the selected server cannot be obtained (e.g. downloading it without internet). */
class TemporalServerUnavailableError extends Error {}

/** Absolute path of the compiled temporal-dev CLI next to this compiled helper, whatever the out dir. */
export function temporalDevMainPath(): string {
  return resolve(__dirname, '..', '..', 'temporal-dev', 'main.js');
}

let wrapperPath: string | undefined;
/** A tiny executable that starts temporal-dev, for `server.executable.type = 'existing-path'`. */
function temporalDevExecutable(): string {
  if (!wrapperPath) {
    const dir = mkdtempSync(join(tmpdir(), 'temporal-dev-'));
    wrapperPath = join(dir, 'temporal-dev');
    writeFileSync(wrapperPath, `#!/bin/sh\nexec "${process.execPath}" "${temporalDevMainPath()}" "$@"\n`);
    chmodSync(wrapperPath, 0o755);
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  return wrapperPath;
}

/** A `bundleWorkflowCode` logger that says nothing, for tests that bundle workflows of their own. */
export const quietBundlerLogger = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

let logsSilenced = false;
/** Installs a quiet SDK logger (WARN by default) once per process; call before creating any environment or worker. */
export function silenceSdkLogs(level: 'WARN' | 'ERROR' = 'WARN'): void {
  if (logsSilenced) return;
  logsSilenced = true;
  try {
    Runtime.install({
      logger: new DefaultLogger(level),
      telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: level, other: level }), forward: {} } },
    });
  } catch {
    // A runtime already exists (someone created a worker or connection first): keep it.
  }
}

async function orUnavailable<T>(create: () => Promise<T>): Promise<T> {
  try {
    return await create();
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (temporalServerKind === 'download' && /download|dns|resolve|network|fetch/i.test(message)) {
      const reason = /dns error[^)\n]*/i.exec(message)?.[0] ?? message.split('\n')[0]!.slice(-120);
      throw new TemporalServerUnavailableError(`TEMPORAL_TEST_SERVER=download but Temporal's server cannot be downloaded (${reason})`);
    }
    throw err;
  }
}

/** A time-skipping environment: temporal-dev in a child process, or Temporal's downloaded test server. */
export async function createTimeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  silenceSdkLogs();
  if (temporalServerKind === 'download') return orUnavailable(() => TestWorkflowEnvironment.createTimeSkipping());
  return TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: temporalDevExecutable() } },
  });
}

/** A real-clock environment: temporal-dev in this process, or Temporal's downloaded dev server (CLI). */
export async function createLocalEnv(): Promise<TestWorkflowEnvironment> {
  silenceSdkLogs();
  if (temporalServerKind === 'download') return orUnavailable(() => TestWorkflowEnvironment.createLocal());
  // Herald's history dictionaries, as production's embedded temporal-dev has them.
  const server = await startServer({ port: 0, historyDictionaries: historyDictionaries() });
  try {
    const env = await TestWorkflowEnvironment.createFromExistingServer({ address: server.address });
    const teardown = env.teardown.bind(env);
    env.teardown = async () => {
      await teardown();
      await server.close();
    };
    return env;
  } catch (err) {
    await server.close();
    throw err;
  }
}

/**
 * For a mocha `before` hook: creates the environment, or skips the suite with a one-line reason when the
 * selected server is unavailable (TEMPORAL_TEST_SERVER=download without internet).
 */
export async function envOrSkip(
  ctx: Mocha.Context,
  create: () => Promise<TestWorkflowEnvironment> = createTimeSkippingEnv,
): Promise<TestWorkflowEnvironment> {
  try {
    return await create();
  } catch (err) {
    if (err instanceof TemporalServerUnavailableError) {
      console.log(`      skipped: ${err.message}`);
      ctx.skip();
    }
    throw err;
  }
}

/**
 * The activity info a `MockActivityEnvironment` running a platform call needs: the time limit the workflow gives it
 * (`held.ts`: a hold's plus 10 minutes). The mock's own default (1 s) leaves no room for a create to begin
 * (`src/platforms/send-stop.ts`), where no real platform call is that short.
 */
export function platformCallInfo(holdMs = 0): { startToCloseTimeoutMs: number } {
  return { startToCloseTimeoutMs: holdMs + 10 * 60_000 };
}
