import assert from 'node:assert/strict';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode } from '@temporalio/worker';
import { MessageChannel } from 'node:worker_threads';
import type { WorkflowCreator } from '@temporalio/worker/lib/workflow/interface';
import { watchActivations, watchedWorkerClass, type BlockedActivation } from '../../src/temporal/activation-watch';
import { createLocalEnv, envOrSkip, quietBundlerLogger } from '../helpers/temporal';

/**
 * The worker runs workflow code without the SDK's per-call `vm` timeout (issue 15); a workflow stuck in a synchronous
 * loop must still be caught: reported with its identity, and the worker failed rather than silently hung.
 */
describe('Temporal worker: activations watched without the vm timeout', function () {
  this.timeout(180_000);
  let env: TestWorkflowEnvironment;
  let workflowBundle: { code: string };

  before(async function () {
    env = await envOrSkip(this, createLocalEnv);
    workflowBundle = await bundleWorkflowCode({ workflowsPath: require.resolve('./spinning-workflows'), logger: quietBundlerLogger });
  });
  after(async () => {
    await env?.teardown();
  });

  it('runs ordinary workflows and reports nothing', async () => {
    const blocked: BlockedActivation[] = [];
    const taskQueue = `watch-ok-${Date.now()}`;
    const worker = await watchedWorkerClass({ limitMs: 2_000, onBlocked: (b) => blocked.push(b) }).create({ connection: env.nativeConnection, taskQueue, workflowBundle });
    const result = await worker.runUntil(env.client.workflow.execute('answerSoon', { taskQueue, workflowId: `answer-${taskQueue}` }));
    assert.equal(result, 'answered');
    assert.deepEqual(blocked, []);
  });

  it('reports a workflow spinning in a synchronous loop and fails the worker', async () => {
    const blocked: BlockedActivation[] = [];
    const taskQueue = `watch-spin-${Date.now()}`;
    const workflowId = `spin-${taskQueue}`;
    const worker = await watchedWorkerClass({ limitMs: 2_000, onBlocked: (b) => blocked.push(b) }).create({ connection: env.nativeConnection, taskQueue, workflowBundle });
    const running = worker.run();
    await env.client.workflow.start('spinForever', { taskQueue, workflowId });
    const failure = await running.then(
      () => null,
      (err: unknown) => err,
    );
    assert.equal(blocked.length, 1, 'the spinning activation is reported once');
    assert.equal(blocked[0]!.workflowId, workflowId);
    assert.equal(blocked[0]!.workflowType, 'spinForever');
    assert.ok(blocked[0]!.runningMs >= 2_000, `reported after the limit (${blocked[0]!.runningMs} ms)`);
    assert.ok(failure instanceof Error, `the worker failed (${String(failure)})`);
  });

  it('a main thread held up past the limit is not taken for a spinning workflow: the answer waiting in its queue counts', async () => {
    // The workflow thread's answer is a message on a port, as the SDK's threaded creator receives it.
    const channel = new MessageChannel();
    const answer = new Promise<unknown>((resolve) => channel.port2.once('message', resolve));
    const creator = {
      createWorkflow: async () => ({ activate: () => answer, getAndResetSinkCalls: () => [], dispose: async () => undefined }),
      destroy: async () => undefined,
    } as unknown as WorkflowCreator;
    const blocked: BlockedActivation[] = [];
    const watched = await watchActivations(creator, { limitMs: 300, onBlocked: (b) => blocked.push(b) }).createWorkflow({
      info: { workflowId: 'held-up', runId: 'run', workflowType: 'answerSoon' },
    } as never);
    const activated = watched.activate({} as never);
    channel.port1.postMessage('done');
    // This thread busy past the limit: the timer and the answer are both due when it comes back.
    const until = Date.now() + 800;
    while (Date.now() < until);
    await activated;
    await new Promise((resolve) => setTimeout(resolve, 400));
    channel.port1.close();
    assert.deepEqual(blocked, []);
  });
});
