import type { SinkCall } from '@temporalio/workflow';
import type { coresdk } from '@temporalio/proto';
import type { WorkflowCreateOptions } from '@temporalio/worker/lib/workflow/interface';
import { Worker as NodeWorker } from 'node:worker_threads';
import {
  ThreadedVMWorkflowCreator,
  VMWorkflowThreadProxy,
  WorkerThreadClient,
  type ThreadedVMWorkflowCreatorOptions,
} from '@temporalio/worker/lib/workflow/threaded-vm';

/**
 * The workflow thread's requests sent back to back instead of one after another's answer (issue 15, the 200 ms
 * platform's p50).
 *
 * The SDK talks to its workflow thread one request at a time: a new workflow is created (one round trip), activated
 * (another), and its sink calls (the workflow's `log` lines) are taken (a third); a cached workflow's activation is two.
 * Each round trip wakes the workflow thread and then the main thread, 1.5–2.5 ms on this machine when they were idle
 * (`bench/publish-trace.ts`: `thread>` / `thread<`), and an immediate publish waits on the first activation. Here
 * they are posted together: the thread takes messages in order and handles each to its end before the next (create,
 * activate and extract run synchronously there on Node), so the activation finds its workflow created and the
 * extraction takes exactly that activation's sink calls, as before; only the waits between them are gone.
 * A failed create fails the activation with the create's own error, as when the SDK awaited it.
 */
export class PipelinedWorkflowCreator extends ThreadedVMWorkflowCreator {
  /**
   * The SDK's `ThreadedVMWorkflowCreator.create`, its threads started on Herald's entry (`workflow-thread.ts`: the
   * SDK's thread with the promise stacks formatted lazily) instead of the SDK's own.
   */
  static override async create(options: ThreadedVMWorkflowCreatorOptions): Promise<PipelinedWorkflowCreator> {
    const clients = Array.from(
      { length: options.threadPoolSize },
      () => new WorkerThreadClient(new NodeWorker(require.resolve('./workflow-thread')), options.logger, options.patchActivationCallback),
    );
    const { workflowBundle, isolateExecutionTimeoutMs, reuseV8Context, registeredActivityNames } = options;
    const hasPatchActivationCallback = options.patchActivationCallback !== undefined;
    await Promise.all(
      clients.map((client) =>
        client.send({ type: 'init', workflowBundle, isolateExecutionTimeoutMs, reuseV8Context, registeredActivityNames, hasPatchActivationCallback }),
      ),
    );
    return new this(clients);
  }

  override async createWorkflow(options: WorkflowCreateOptions): Promise<VMWorkflowThreadProxy> {
    // The SDK's choice of thread (the one running the fewest workflows) and its preparation of the options.
    const client = this.workerThreadClients.reduce((prev, curr) => (prev.getActiveWorkflowCount() < curr.getActiveWorkflowCount() ? prev : curr));
    // Functions cannot be posted to a thread; the thread puts its own back (`initRuntime`).
    const unsafe = options.info.unsafe as { now?: unknown; random?: unknown };
    delete unsafe.now;
    delete unsafe.random;
    return new PipelinedWorkflow(client, options.info.runId, handled(client.send({ type: 'create-workflow', options })));
  }
}

class PipelinedWorkflow extends VMWorkflowThreadProxy {
  private sinkCalls: Promise<SinkCall[]> | undefined;

  constructor(
    client: WorkerThreadClient,
    runId: string,
    /** The create's answer until the first activation has awaited it. */
    private created: Promise<unknown> | undefined,
  ) {
    super(client, runId);
  }

  override async activate(activation: coresdk.workflow_activation.IWorkflowActivation): Promise<coresdk.workflow_completion.IWorkflowActivationCompletion> {
    // Both are posted before the first await: the activation, then the extraction of the sink calls it makes.
    const completion = handled(super.activate(activation));
    this.sinkCalls = handled(super.getAndResetSinkCalls());
    const created = this.created;
    this.created = undefined;
    await created;
    return completion;
  }

  /** The SDK asks for them after every activation: they are already on their way. */
  override getAndResetSinkCalls(): Promise<SinkCall[]> {
    const calls = this.sinkCalls ?? super.getAndResetSinkCalls();
    this.sinkCalls = undefined;
    return calls;
  }
}

/** Marks a promise handled (its rejection is still what an await of it throws), for answers awaited later or never. */
function handled<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}
