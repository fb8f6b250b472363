import { Client } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker, type LogLevel } from '@temporalio/worker';
import { createActivities, type ActivityDeps } from '../../activities';
import type { Logger } from '../logger';
import { activationLimitMs, watchedWorkerClass, type ActivationWatch } from './activation-watch';
import { bundleWorkflowsInChild } from './workflow-bundle';

const taskQueue = 'herald';

let runtimeInstalled = false;

/**
 * The Temporal runtime answers SIGINT/SIGTERM itself by default; Herald owns shutdown order (HTTP first, then the
 * worker, then storage), so the runtime gets no signals and logs through pino.
 */
function installRuntime(logger: Logger): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const toPino: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
    TRACE: 'trace',
    DEBUG: 'debug',
    INFO: 'info',
    WARN: 'warn',
    ERROR: 'error',
  };
  try {
    Runtime.install({
      shutdownSignals: [],
      logger: new DefaultLogger('WARN', (entry) => logger[toPino[entry.level]]({ temporal: entry.meta }, entry.message)),
    });
  } catch (err) {
    // In a test process another suite may have installed the runtime first (one per process): keep that one.
    if (!(err instanceof Error && /already been installed/.test(err.message))) throw err;
  }
}

/**
 * gzip (the SDK's default) costs CPU on both ends of every call and saves nothing on the loopback interface, where
 * the embedded temporal-dev always is: off there. A server elsewhere keeps the default.
 */
export function grpcCompressionFor(address: string): { codec: 'gzip' | 'none' } {
  const host = address.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1').toLowerCase();
  const loopback = host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
  return { codec: loopback ? 'none' : 'gzip' };
}

/**
 * Every scheduled post due within the next `HERALD_DUE_LEAD_MS` holds an activity slot until its instant
 * (`publishWhenDue`), and the other activities (threads, webhooks, comment sync, credentials) need slots beside
 * them: the SDK's 100 would let a burst starve those and hold later posts of the burst past their time. 5,000 is
 * two and a half times the burst issue 15 sets as the goal (2,000 at one instant) plus room for the rest; a slot is
 * a pending timer, its activity's context and input until the instant (a few KiB, README "Scheduled bursts"), so
 * the number costs nothing until used. Beyond it, the later posts of a burst wait for a slot and go out late, never early.
 */
const maxConcurrentActivityTaskExecutions = 5_000;

/**
 * A burst of scheduled posts due at one instant (issue 15) is as many workflow tasks at once, each waiting mostly
 * on the database and the platform: more of them in flight keeps the process busy instead of waiting. 100 until the
 * evening of 2026-11-26, then the SDK's own 40, to cache fewer runs (`maxCachedWorkflows`, which may not be fewer):
 * `npm run bench:burst` (2,000 at one instant) read p99 2.43 s and 820 posts/s with 40 against 2.24 s and 894 with 100.
 */
const burstWorkerOptions = { maxConcurrentWorkflowTaskExecutions: 40, maxConcurrentLocalActivityExecutions: 200, maxConcurrentActivityTaskExecutions };

/**
 * Workflows kept in the worker's cache between tasks (issue 15). The SDK's default follows the heap limit (about
 * 2,300 with a 4 GiB heap), so every waiting scheduled post stayed in memory until then. A workflow evicted while
 * it waits is replayed from its history when its timer fires or a signal arrives: a publishPost waiting on its
 * timer has about 6 events, replayed in a few milliseconds of CPU once, against tens of KiB held for days.
 * As many as the worker's concurrent workflow task slots (`burstWorkerOptions`: fewer would cap them), so every
 * task in flight has its run cached. Each cached run holds ~75 KiB in the workflow thread's heap and ~70 KiB of
 * sdk-core's own (its state machines, in malloc'd memory: sampled with an LD_PRELOAD allocation tracer,
 * 2026-11-26), and those last blocks, made while a burst's buffers come and go, also keep glibc from giving the
 * freed memory around them back. The cache is full of a burst's last runs until other work replaces them (the
 * SDK cannot be told to evict): 250 until 2026-11-26, then 150, 100, and 40. bench:memory with 10,000 waiting,
 * 120 s after: 100 → 40 took the workflow thread's heap from 27.2 to 23.3 MiB and glibc's live memory from
 * 17.5–18.7 to 13.5 MiB (+7.9–9.1 → +7.2 MiB PSS per 1,000); a burst whose runs outnumber the cache replays the
 * evicted ones (bench:burst's whole-burst CPU 43 → 46 s).
 */
export const maxCachedWorkflows = 40;

/** Herald's worker class: the SDK's, as `watchedWorkerClass` makes it, its blocked activations logged as errors. */
export function heraldWorkerClass(logger: Logger): typeof Worker {
  return watchedWorkerClass(activationWatchOf(logger));
}

/**
 * Workflow code runs without the SDK's per-call `vm` timeout, whose watchdog thread per call into the sandbox cost
 * the publish path CPU and, on a busy machine, milliseconds of waiting per activation (README "Publish path cost");
 * a workflow thread that answers nothing for the SDK's own 5 s while an activation waits is reported here, and the
 * worker fails (`activation-watch.ts`).
 */
function activationWatchOf(logger: Logger): ActivationWatch {
  return {
    limitMs: activationLimitMs,
    onBlocked: (blocked) =>
      logger.error(blocked, 'a workflow activation has held the workflow thread past its limit (workflow code in an endless synchronous loop?): the worker is stopped'),
  };
}

interface TemporalParts {
  client: Client;
  worker: Worker;
  /** Resolves when the worker stopped (after `shutdown`). */
  running: Promise<void>;
  /**
   * Stops polling for new tasks; in-flight activities go on, within `shutdownGraceMs` of this call (then they are
   * cancelled). The connection stays open for the client until `shutdown`.
   */
  stopPolling(): void;
  /** Stops polling (when `stopPolling` has not), waits for in-flight activities, closes connections. */
  shutdown(): Promise<void>;
}

export async function startTemporal(
  address: string,
  namespace: string,
  deps: ActivityDeps,
  options: { shutdownGraceMs?: number; workerClass?: typeof Worker; taskQueue?: string } = {},
): Promise<TemporalParts> {
  installRuntime(deps.logger);
  // One connection for the worker and the API's client: eager workflow start needs the client on the worker's own.
  const nativeConnection = await NativeConnection.connect({ address, grpcCompression: grpcCompressionFor(address) });
  const client = new Client({ connection: nativeConnection, namespace });
  let worker: Worker;
  try {
    worker = await (options.workerClass ?? heraldWorkerClass(deps.logger)).create({
      connection: nativeConnection,
      namespace,
      taskQueue: options.taskQueue ?? taskQueue,
      workflowBundle: await bundleWorkflowsInChild(require.resolve('../../workflows')),
      maxCachedWorkflows,
      activities: createActivities(deps),
      ...burstWorkerOptions,
      shutdownGraceTime: options.shutdownGraceMs ?? 25_000,
    });
  } catch (err) {
    await nativeConnection.close().catch(() => undefined);
    throw err;
  }
  const running = worker.run();
  let stopped: Promise<void> | undefined;
  const stopPolling = () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
  };
  return {
    client,
    worker,
    running,
    stopPolling,
    shutdown: () =>
      (stopped ??= (async () => {
        stopPolling();
        await running.catch((err) => deps.logger.error({ err }, 'temporal worker stopped with an error'));
        await nativeConnection.close().catch(() => undefined);
      })()),
  };
}
