import { Worker, type Logger } from '@temporalio/worker';
import type { CompiledWorkerOptions } from '@temporalio/worker/lib/worker-options';
import type { WorkflowCreator } from '@temporalio/worker/lib/workflow/interface';
import type { WorkflowBundleWithSourceMapAndFilename } from '@temporalio/worker/lib/workflow/workflow-worker-thread/input';

/**
 * A Worker whose calls into the workflow sandbox run without `vm`'s `timeout` (issue 15). The SDK passes
 * `isolateExecutionTimeout` (5 s) to every `runInContext`, and Node starts and joins a watchdog thread for each such
 * call (~150 µs of wall time and ~87 µs of CPU here, 4–6 calls per activation); with `timeout` undefined `vm` runs the
 * call directly. What the timeout protected against, a workflow spinning synchronously forever, then blocks its
 * workflow thread instead of failing its task after 5 s. `Worker.create` builds `this`, so `create` on this class
 * returns one of these; the override is of the SDK's `protected static createWorkflowCreator`.
 */
export class UnwatchedWorker extends Worker {
  protected static override async createWorkflowCreator(
    workflowBundle: WorkflowBundleWithSourceMapAndFilename,
    compiledOptions: CompiledWorkerOptions,
    logger: Logger,
  ): Promise<WorkflowCreator> {
    // undefined reaches the workflow thread's `init` and every `runInContext` as `timeout: undefined`: no watchdog.
    const withoutTimeout = { ...compiledOptions, isolateExecutionTimeoutMs: undefined as unknown as number };
    return super.createWorkflowCreator(workflowBundle, withoutTimeout, logger);
  }
}
