import assert from 'node:assert/strict';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode } from '@temporalio/worker';
import { watchedWorkerClass, type BlockedActivation } from '../../src/temporal/activation-watch';
import { createLocalEnv, envOrSkip } from '../helpers/temporal';

const quietBundlerLogger = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

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
});
