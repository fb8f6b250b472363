import { Worker, type Logger } from '@temporalio/worker';
import type { CompiledWorkerOptions } from '@temporalio/worker/lib/worker-options';
import type { Workflow, WorkflowCreator } from '@temporalio/worker/lib/workflow/interface';
import type { WorkflowBundleWithSourceMapAndFilename } from '@temporalio/worker/lib/workflow/workflow-worker-thread/input';
import { PipelinedWorkflowCreator } from './pipelined-workflows';

/**
 * Workers whose calls into the workflow sandbox run without `vm`'s `timeout` (issue 15), and what replaces it.
 *
 * The SDK passes `isolateExecutionTimeout` (5 s) to every `runInContext`, and Node starts and joins a watchdog
 * thread for each such call (~150 µs of wall time and ~87 µs of CPU on the development machine, 4–6 calls per
 * activation); with `timeout` undefined `vm` runs the call directly. What the timeout protected against is a workflow
 * spinning synchronously without end: the SDK failed its task after 5 s. Without it such a workflow would hold its
 * workflow thread, and every workflow on it, silently. So the main thread watches each activation instead (one timer
 * per activation, which the spinning thread cannot block): an activation waiting while the workflow thread has
 * answered nothing for `limitMs` is reported, and the thread is terminated, which fails the worker (`Worker.run`
 * rejects) instead of leaving it hung. The override is of the SDK's `protected static createWorkflowCreator`;
 * `Worker.create` builds `this`, so `create` on the class returned here builds one of these.
 */

/** An activation that has held the workflow thread past the limit (reported while it still runs). */
export interface BlockedActivation {
  workflowId: string;
  runId: string;
  workflowType: string;
  runningMs: number;
}

export interface ActivationWatch {
  /** The workflow thread silent this long (ms) while an activation waits is taken for a workflow spinning without end. */
  limitMs: number;
  /** Told once, for the first activation found blocked; the worker is failed right after. */
  onBlocked(blocked: BlockedActivation): void;
}

/** The SDK's `isolateExecutionTimeout`, kept as the watch's limit: a legitimate activation never comes near it. */
export const activationLimitMs = 5_000;

/** A Worker class without the per-call `vm` timeout whose activations are watched from the main thread. */
export function watchedWorkerClass(watch: ActivationWatch): typeof Worker {
  return class WatchedWorker extends Worker {
    protected static override async createWorkflowCreator(
      workflowBundle: WorkflowBundleWithSourceMapAndFilename,
      compiledOptions: CompiledWorkerOptions,
      logger: Logger,
    ): Promise<WorkflowCreator> {
      // undefined reaches the workflow thread's `init` and every `runInContext` as `timeout: undefined`: no watchdog.
      const withoutTimeout = { ...compiledOptions, isolateExecutionTimeoutMs: undefined as unknown as number };
      // Debug mode runs workflows on this thread (the SDK's own creator, as it is); otherwise the SDK's thread pool,
      // as `Worker.createWorkflowCreator` makes it, with Herald's thread entry and its requests pipelined.
      if (compiledOptions.debugMode) return watchActivations(await super.createWorkflowCreator(workflowBundle, withoutTimeout, logger), watch);
      const creator = await PipelinedWorkflowCreator.create({
        workflowBundle,
        threadPoolSize: compiledOptions.workflowThreadPoolSize,
        isolateExecutionTimeoutMs: withoutTimeout.isolateExecutionTimeoutMs,
        reuseV8Context: compiledOptions.reuseV8Context ?? true,
        registeredActivityNames: new Set(compiledOptions.activities.keys()),
        logger,
        patchActivationCallback: compiledOptions.patchActivationCallback,
      });
      return watchActivations(creator, watch);
    }
  };
}

/** The SDK's threaded creator holds its threads here (not typed: an implementation detail read only to stop them). */
type ThreadedCreator = WorkflowCreator & { workerThreadClients?: Array<{ workerThread?: { terminate(): Promise<number> } }> };

export function watchActivations(creator: WorkflowCreator, watch: ActivationWatch): WorkflowCreator {
  let reported = false;
  const blocked = (activation: BlockedActivation) => {
    if (reported) return;
    reported = true;
    try {
      watch.onBlocked(activation);
    } finally {
      // A thread in an endless synchronous loop never comes back: stopping it rejects what waits on it, and the worker fails.
      for (const client of (creator as ThreadedCreator).workerThreadClients ?? []) void client.workerThread?.terminate();
    }
  };
  // Activations queue for the one workflow thread (`reuseV8Context`, the SDK's default), so one may wait behind many
  // in a burst: what is held against it is the thread answering nothing at all for `limitMs`, not its own wait.
  let lastAnswerAt = Date.now();
  return {
    async createWorkflow(options) {
      const workflow = await creator.createWorkflow(options);
      const { workflowId, runId, workflowType } = options.info;
      const watched: Workflow = {
        async activate(activation) {
          const started = Date.now();
          let answered = false;
          const silentMs = () => Date.now() - Math.max(lastAnswerAt, started);
          const check = () => {
            if (silentMs() < watch.limitMs) {
              timer = setTimeout(check, watch.limitMs - silentMs());
              return;
            }
            // Looked at again after the poll phase: when this thread was the one held up (a long synchronous stretch,
            // a starved core), the workflow thread's answer is already queued and is read there, before this runs.
            setImmediate(() => {
              if (!answered && silentMs() >= watch.limitMs) blocked({ workflowId, runId, workflowType, runningMs: Date.now() - started });
            });
          };
          let timer = setTimeout(check, watch.limitMs);
          try {
            return await workflow.activate(activation);
          } finally {
            answered = true;
            lastAnswerAt = Date.now();
            clearTimeout(timer);
          }
        },
        getAndResetSinkCalls: () => workflow.getAndResetSinkCalls(),
        dispose: () => workflow.dispose(),
      };
      return watched;
    },
    destroy: () => creator.destroy(),
  };
}
