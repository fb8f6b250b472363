// Shared suite setup: one environment and one workflow bundle per suite, a unique task queue per test, and a
// replay check for fetched histories.
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, Worker, type WorkerOptions, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { createTimeSkippingEnv, envOrSkip, silenceSdkLogs } from '../../test/helpers/temporal';
import * as activities from './activities';

export interface Suite {
  env: TestWorkflowEnvironment;
  bundle: WorkflowBundleWithSourceMap;
  /** A task queue no other test uses. */
  taskQueue(): string;
  /** Runs `fn` while a worker polls `taskQueue`. */
  withWorker<T>(taskQueue: string, fn: () => Promise<T>, options?: Partial<WorkerOptions>): Promise<T>;
  /** Fetches the history of a finished workflow and replays it through the real worker. */
  assertReplays(handle: WorkflowHandle): Promise<void>;
}

let bundling: Promise<WorkflowBundleWithSourceMap> | undefined;

export function useSuite(create: () => Promise<TestWorkflowEnvironment> = createTimeSkippingEnv): Suite {
  const suite = {} as Suite;
  before(async function () {
    this.timeout(60_000);
    silenceSdkLogs('ERROR'); // the suite provokes failures on purpose; their WARN logs are noise
    // One bundle for all suite files of a mocha run: bundling costs seconds.
    bundling ??= bundleWorkflowCode({ workflowsPath: require.resolve('./workflows'), logger: quietLogger });
    suite.bundle = await bundling;
    suite.env = await envOrSkip(this, create);
  });
  after(async () => suite.env?.teardown());
  suite.taskQueue = () => `tq-${randomUUID()}`;
  suite.withWorker = async (taskQueue, fn, options = {}) => {
    const worker = await Worker.create({
      connection: suite.env.nativeConnection,
      taskQueue,
      workflowBundle: suite.bundle,
      activities,
      workflowThreadPoolSize: 1, // a 2-core machine; one thread starts faster
      ...options,
    });
    return await worker.runUntil(fn);
  };
  suite.assertReplays = async (handle) => {
    const history = await handle.fetchHistory();
    await Worker.runReplayHistory({ workflowBundle: suite.bundle }, history, handle.workflowId);
  };
  return suite;
}

const noop = () => undefined;
const quietLogger = { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: noop };
