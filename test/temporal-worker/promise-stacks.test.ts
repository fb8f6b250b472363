import assert from 'node:assert/strict';
import { once } from 'node:events';
import { Worker as WorkerThread } from 'node:worker_threads';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { watchedWorkerClass } from '../../src/temporal/activation-watch';
import { createLocalEnv, envOrSkip, quietBundlerLogger } from '../helpers/temporal';

/**
 * src/temporal/lazy-promise-stacks.ts: Herald's workflow thread keeps each pending promise's stack unformatted until a
 * stack trace query reads it (issue 15). The queries must answer exactly what the SDK's own hook answers, and a
 * promise made must cost no formatting.
 */
describe('Temporal worker: promise stacks formatted when a stack trace query reads them', function () {
  this.timeout(180_000);

  async function inThread(env: Record<string, string> = {}) {
    const thread = new WorkerThread(require.resolve('./lazy-stacks-thread'), { env: { ...process.env, ...env } });
    const [seen] = (await once(thread, 'message')) as [{ formattedWhenMade: number; tracked: number; runIds: string[]; firstStack?: string; formattedAfterOneRead: number }];
    await thread.terminate();
    return seen;
  }

  it('formats no stack when a promise is made, and the SDK formatting once when it is read', async () => {
    const lazy = await inThread();
    assert.equal(lazy.tracked, 50);
    assert.deepEqual(lazy.runIds, ['run-1']);
    assert.equal(lazy.formattedWhenMade, 0);
    assert.equal(lazy.formattedAfterOneRead, 1);
    assert.match(lazy.firstStack ?? '', /^\s+at new Promise \(<anonymous>\)\n\s+at madeByAWorkflow \(evalmachine\.<anonymous>:1:\d+\)/);
    // The SDK's own hook, for comparison: the same stack, formatted for every promise as it is made.
    const sdk = await inThread({ HERALD_TEST_SDK_HOOK: '1' });
    assert.equal(sdk.tracked, 50);
    assert.ok(sdk.formattedWhenMade >= 50, `the SDK formatted ${sdk.formattedWhenMade} times`);
    assert.equal(lazy.firstStack, sdk.firstStack);
  });

  describe('against a workflow server', () => {
    let env: TestWorkflowEnvironment;
    let workflowBundle: { code: string };

    before(async function () {
      env = await envOrSkip(this, createLocalEnv);
      workflowBundle = await bundleWorkflowCode({ workflowsPath: require.resolve('./stack-workflows'), logger: quietBundlerLogger });
    });
    after(async () => {
      await env?.teardown();
    });

    async function stacksFrom(workerClass: typeof Worker, name: string) {
      const taskQueue = `stacks-${name}-${Date.now()}`;
      const worker = await workerClass.create({ connection: env.nativeConnection, taskQueue, workflowBundle });
      return worker.runUntil(async () => {
        const handle = await env.client.workflow.start('waitsInManyWays', { taskQueue, workflowId: taskQueue });
        const plain = await handle.query<string>('__stack_trace');
        const enhanced = await handle.query<{ stacks: unknown }>('__enhanced_stack_trace');
        await handle.terminate();
        return { plain, enhanced };
      });
    }

    it("answers both stack trace queries exactly as the SDK's own worker does", async () => {
      const sdk = await stacksFrom(Worker, 'sdk');
      const herald = await stacksFrom(watchedWorkerClass({ limitMs: 5_000, onBlocked: () => undefined }), 'herald');
      for (const waiting of ['waitForADay', 'waitForNothing', 'raceOfTwo', 'waitInsideAllSettled', 'waitsInManyWays']) {
        assert.match(sdk.plain, new RegExp(`at ${waiting} `), `the SDK's trace shows ${waiting}`);
      }
      assert.equal(herald.plain, sdk.plain);
      assert.deepEqual(herald.enhanced, sdk.enhanced);
    });
  });
});
