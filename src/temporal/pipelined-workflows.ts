import type { SinkCall } from '@temporalio/workflow';
import type { coresdk } from '@temporalio/proto';
import type { WorkflowCreateOptions, WorkflowCreator } from '@temporalio/worker/lib/workflow/interface';
import { ThreadedVMWorkflowCreator, VMWorkflowThreadProxy, type WorkerThreadClient } from '@temporalio/worker/lib/workflow/threaded-vm';

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
class PipelinedWorkflowCreator extends ThreadedVMWorkflowCreator {
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

/** The SDK's threaded creator, its requests pipelined; any other creator (debug mode's, on the main thread) as it is. */
export function pipelinedWorkflows(creator: WorkflowCreator): WorkflowCreator {
  if (!(creator instanceof ThreadedVMWorkflowCreator)) return creator;
  return new PipelinedWorkflowCreator((creator as unknown as { workerThreadClients: WorkerThreadClient[] }).workerThreadClients);
}
