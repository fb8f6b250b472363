import type { Logger } from '../logger';

/** What `runUntilStopped` runs: stopped at a signal or when it says it failed (`RunningHerald` in `src/main.ts`). */
interface RunningService {
  stop(): Promise<void>;
  failed: Promise<{ message: string; err: unknown }>;
}

/**
 * The process around `npm start`'s service: SIGTERM/SIGINT stop it (exit 0), its failure stops it (exit 1), a failed
 * start exits 1 saying why on stderr too, and a signal during the start aborts it (`start`'s signal) and exits 0 once
 * what had started is undone. Every stop is bounded by `shutdownTimeoutMs`; signals while stopping are ignored.
 */
export async function runUntilStopped(start: (signal: AbortSignal) => Promise<RunningService>, { shutdownTimeoutMs, logger }: { shutdownTimeoutMs: number; logger: Logger }): Promise<void> {
  // The handlers come first: a signal during start-up must stop the embedded services already started, not kill the
  // process with them left running.
  const starting = new AbortController();
  let herald: RunningService | undefined;
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return void logger.info({ signal }, 'already stopping; signal ignored');
    if (herald) return shutdown(herald, signal, 0);
    stopping = true;
    logger.info({ signal }, 'signal during start-up: stopping what has started');
    exitAfterTimeout(shutdownTimeoutMs, logger);
    starting.abort(new StartupAborted(signal));
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);

  const shutdown = (running: RunningService, reason: string, exitCode: 0 | 1) => {
    if (stopping) return;
    stopping = true;
    logger.info({ reason }, 'shutting down');
    exitAfterTimeout(shutdownTimeoutMs, logger);
    running.stop().then(
      () => {
        logger.info('stopped');
        process.exit(exitCode);
      },
      (err) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  try {
    herald = await start(starting.signal);
  } catch (err) {
    if (err instanceof StartupAborted) {
      logger.info({ signal: err.signal }, 'stopped during start-up');
      process.exit(0);
    }
    logger.fatal({ err }, 'herald failed to start');
    // Also on stderr: whoever started the process may read only that (a test, a supervisor's short report).
    process.stderr.write(`herald failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
  const running = herald;
  void running.failed.then(({ message, err }) => {
    logger.fatal({ err }, message);
    shutdown(running, message, 1);
  });
}

class StartupAborted extends Error {
  constructor(readonly signal: NodeJS.Signals) {
    super(`start-up stopped by ${signal}`);
  }
}

/** A shutdown that hangs (an activity that ignores cancellation) ends the process after this long anyway. */
function exitAfterTimeout(timeoutMs: number, logger: Logger): void {
  const force = setTimeout(() => {
    logger.error({ timeoutMs }, 'shutdown timed out; exiting');
    process.exit(1);
  }, timeoutMs);
  force.unref();
}
