import assert from 'node:assert/strict';
import { Worker as WorkerThread } from 'node:worker_threads';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, type InjectedSinks } from '@temporalio/worker';
import { watchedWorkerClass, type BlockedActivation } from '../../src/temporal/activation-watch';
import { createLocalEnv, envOrSkip, quietBundlerLogger } from '../helpers/temporal';
import type { RecorderSinks } from './pipelined-workflows';

/**
 * src/temporal/pipelined-workflows.ts: Herald's worker posts a workflow's create, activation and sink-call extraction
 * to the workflow thread together (issue 15). The workflows must run as before, every sink call reach the worker once
 * and in order, and the requests go out before the first answer comes back.
 */
describe('Temporal worker: requests to the workflow thread sent back to back', function () {
  this.timeout(180_000);
  let env: TestWorkflowEnvironment;
  let workflowBundle: { code: string };

  before(async function () {
    env = await envOrSkip(this, createLocalEnv);
    workflowBundle = await bundleWorkflowCode({ workflowsPath: require.resolve('./pipelined-workflows'), logger: quietBundlerLogger });
  });
  after(async () => {
    await env?.teardown();
  });

  it('runs workflows side by side with every sink call delivered once, in order; a new workflow posts its three requests before any answer', async () => {
    const recorded = new Map<string, string[]>();
    const sinks: InjectedSinks<RecorderSinks> = {
      recorder: { record: { fn: (info, line) => void recorded.set(info.workflowId, [...(recorded.get(info.workflowId) ?? []), line]) } },
    };
    // What crosses to this worker's workflow thread, in order: each request posted, each answer received. Other
    // tests' workers may still run in this process: only the threads made while this worker is created count.
    const traffic: Array<{ thread: WorkerThread; what: string }> = [];
    const post = WorkerThread.prototype.postMessage;
    const emit = WorkerThread.prototype.emit;
    WorkerThread.prototype.postMessage = function (this: WorkerThread, ...args: Parameters<typeof post>) {
      traffic.push({ thread: this, what: `post ${(args[0] as { input?: { type?: string } })?.input?.type}` });
      return post.apply(this, args);
    };
    WorkerThread.prototype.emit = function (this: WorkerThread, event: string | symbol, ...args: unknown[]) {
      if (event === 'message') traffic.push({ thread: this, what: 'answer' });
      return emit.call(this, event, ...args) as boolean;
    } as typeof emit;
    let ours: Set<WorkerThread> = new Set();
    const blocked: BlockedActivation[] = [];
    const taskQueue = `pipelined-${Date.now()}`;
    try {
      const before = traffic.length;
      const worker = await watchedWorkerClass({ limitMs: 5_000, onBlocked: (b) => blocked.push(b) }).create({
        connection: env.nativeConnection,
        taskQueue,
        workflowBundle,
        sinks,
        activities: { echo: async (value: string) => value.toUpperCase() },
      });
      ours = new Set(traffic.slice(before).filter((entry) => entry.what === 'post init').map((entry) => entry.thread));
      const names = Array.from({ length: 12 }, (_, i) => `wf${i}`);
      const results = await worker.runUntil(
        Promise.all(names.map((name) => env.client.workflow.execute('recordEveryStep', { taskQueue, workflowId: `${taskQueue}-${name}`, args: [name, 3] }))),
      );
      names.forEach((name, i) => {
        assert.deepEqual(results[i], [0, 1, 2].map((step) => `${name} ${step}`.toUpperCase()));
        assert.deepEqual(recorded.get(`${taskQueue}-${name}`), [`${name} 0`, `${name} 1`, `${name} 2`, `${name} done`]);
      });
    } finally {
      WorkerThread.prototype.postMessage = post;
      WorkerThread.prototype.emit = emit;
    }
    assert.deepEqual(blocked, []);
    const seen = traffic.filter((entry) => ours.has(entry.thread)).map((entry) => entry.what);
    assert.ok(ours.size > 0, "the worker's workflow thread was seen");
    const firstCreate = seen.indexOf('post create-workflow');
    assert.deepEqual(seen.slice(firstCreate, firstCreate + 3), ['post create-workflow', 'post activate-workflow', 'post extract-sink-calls']);
    assert.ok(seen.indexOf('answer', firstCreate) > firstCreate + 2, 'the three are posted before the first answer');
    // One extraction per activation, no more: the worker takes the calls that came with the activation's answer.
    const count = (what: string) => seen.filter((entry) => entry === what).length;
    assert.equal(count('post extract-sink-calls'), count('post activate-workflow'));
  });
});
