import assert from 'node:assert/strict';
import { bundleWorkflowCode, Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { envOrSkip } from '../../test/helpers/temporal';
import * as activities from './activities';
import { greeting, sleeper } from './workflows';

describe('temporal-dev smoke', function () {
  let env: TestWorkflowEnvironment;
  let bundle: WorkflowBundleWithSourceMap;
  before(async function () {
    this.timeout(60_000);
    bundle = await bundleWorkflowCode({ workflowsPath: require.resolve('./workflows') });
    env = await envOrSkip(this);
  });
  after(async () => env?.teardown());

  it('runs a workflow with an activity and a 24 h timer', async () => {
    const worker = await Worker.create({ connection: env.nativeConnection, taskQueue: 'smoke', workflowBundle: bundle, activities });
    await worker.runUntil(async () => {
      assert.equal(await env.client.workflow.execute(greeting, { taskQueue: 'smoke', workflowId: 'g1', args: ['Ada'] }), 'Hello, Ada!');
      const t0 = Date.now();
      const slept = await env.client.workflow.execute(sleeper, { taskQueue: 'smoke', workflowId: 's1', args: [24 * 3600 * 1000] });
      assert.ok(slept >= 24 * 3600 * 1000);
      assert.ok(Date.now() - t0 < 1000, `took ${Date.now() - t0} ms`);
    });
  });
});
