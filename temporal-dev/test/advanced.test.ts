// Signal-with-start, updates (and update-with-start), child workflows with parent-close policies,
// continue-as-new, workflow-id policies, memo and search attributes, list and count.
import assert from 'node:assert/strict';
import {
  ServiceError,
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type WorkflowHandle,
} from '@temporalio/client';
import { ApplicationFailure, RetryState } from '@temporalio/common';
import { useSuite } from './setup';
import {
  accumulator,
  addSignal,
  countdown,
  finishSignal,
  greeting,
  incrementUpdate,
  parent,
  parentLeavingChild,
  succeedsOnAttempt,
  totalQuery,
  upsertsSearchAttributes,
} from './workflows';

async function statusOf(handle: WorkflowHandle): Promise<string | undefined> {
  return (await handle.describe()).status.name;
}

async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('temporal-dev: signal-with-start, updates, children, continue-as-new, visibility', function () {
  const s = useSuite();

  it('signal-with-start starts once, then signals the running workflow', async () => {
    const taskQueue = s.taskQueue();
    const workflowId = `sws-${taskQueue}`;
    await s.withWorker(taskQueue, async () => {
      const first = await s.env.client.workflow.signalWithStart(accumulator, { taskQueue, workflowId, signal: addSignal, signalArgs: [4] });
      const second = await s.env.client.workflow.signalWithStart(accumulator, { taskQueue, workflowId, signal: addSignal, signalArgs: [6] });
      assert.equal(second.signaledRunId, first.signaledRunId);
      await first.signal(finishSignal);
      assert.equal(await first.result(), 10);
      await s.assertReplays(first);
      const third = await s.env.client.workflow.signalWithStart(accumulator, { taskQueue, workflowId, signal: addSignal, signalArgs: [1] });
      assert.notEqual(third.signaledRunId, first.signaledRunId, 'a closed workflow is started anew');
      await third.signal(finishSignal);
      assert.equal(await third.result(), 1);
    });
  });

  it('executes updates, rejects invalid ones with WorkflowUpdateFailedError, and serves startUpdate handles', async () => {
    const taskQueue = s.taskQueue();
    await s.withWorker(taskQueue, async () => {
      const handle = await s.env.client.workflow.start(accumulator, { taskQueue, workflowId: `upd-${taskQueue}` });
      assert.equal(await handle.executeUpdate(incrementUpdate, { args: [5] }), 5);
      await assert.rejects(handle.executeUpdate(incrementUpdate, { args: [-1] }), (err: unknown) => {
        assert.ok(err instanceof WorkflowUpdateFailedError);
        assert.ok(err.cause instanceof ApplicationFailure);
        assert.equal(err.cause.message, 'negative increments are rejected');
        return true;
      });
      const pending = await handle.startUpdate(incrementUpdate, { args: [2], waitForStage: 'ACCEPTED', updateId: 'inc-2' });
      assert.equal(await pending.result(), 7);
      assert.equal(await handle.getUpdateHandle<number>('inc-2').result(), 7, 'a finished update is found by id');
      assert.equal(await handle.query(totalQuery), 7);
      await handle.signal(finishSignal);
      assert.equal(await handle.result(), 7);
      await assert.rejects(handle.executeUpdate(incrementUpdate, { args: [1] }), WorkflowNotFoundError);
      await s.assertReplays(handle);
    });
  });

  it('update-with-start starts the workflow and returns the update result', async () => {
    const taskQueue = s.taskQueue();
    await s.withWorker(taskQueue, async () => {
      const startOp = new WithStartWorkflowOperation(accumulator, {
        taskQueue,
        workflowId: `uws-${taskQueue}`,
        workflowIdConflictPolicy: 'USE_EXISTING',
      });
      assert.equal(await s.env.client.workflow.executeUpdateWithStart(incrementUpdate, { args: [3], startWorkflowOperation: startOp }), 3);
      const handle = await startOp.workflowHandle();
      const again = new WithStartWorkflowOperation(accumulator, { taskQueue, workflowId: `uws-${taskQueue}`, workflowIdConflictPolicy: 'USE_EXISTING' });
      assert.equal(await s.env.client.workflow.executeUpdateWithStart(incrementUpdate, { args: [4], startWorkflowOperation: again }), 7);
      assert.equal((await (await again.workflowHandle()).describe()).runId, (await handle.describe()).runId);
      const conflicting = new WithStartWorkflowOperation(accumulator, { taskQueue, workflowId: `uws-${taskQueue}`, workflowIdConflictPolicy: 'FAIL' });
      await assert.rejects(
        s.env.client.workflow.executeUpdateWithStart(incrementUpdate, { args: [1], startWorkflowOperation: conflicting }),
        WorkflowExecutionAlreadyStartedError,
      );
      await handle.signal(finishSignal);
      assert.equal(await handle.result(), 7);
      await s.assertReplays(handle);
    });
  });

  it('runs a child workflow and returns its result; the child knows its parent', async () => {
    const taskQueue = s.taskQueue();
    await s.withWorker(taskQueue, async () => {
      const handle = await s.env.client.workflow.start(parent, { taskQueue, workflowId: `parent-${taskQueue}`, args: ['Bo'] });
      assert.equal(await handle.result(), 'child says hi to Bo');
      const child = await s.env.client.workflow.getHandle(`parent-${taskQueue}-child`).describe();
      assert.equal(child.status.name, 'COMPLETED');
      assert.equal(child.parentExecution?.workflowId, `parent-${taskQueue}`);
      await s.assertReplays(handle);
    });
  });

  for (const [policy, expected] of [
    ['ABANDON', 'RUNNING'],
    ['TERMINATE', 'TERMINATED'],
    ['REQUEST_CANCEL', 'CANCELLED'],
  ] as const) {
    it(`applies parent-close policy ${policy} (child ends ${expected})`, async () => {
      const taskQueue = s.taskQueue();
      await s.withWorker(taskQueue, async () => {
        const handle = await s.env.client.workflow.start(parentLeavingChild, { taskQueue, workflowId: `pcp-${taskQueue}`, args: [policy] });
        const childId = await handle.result();
        const child = s.env.client.workflow.getHandle(childId);
        await eventually(async () => (await statusOf(child)) === expected, `child status ${expected}`);
        if (expected === 'RUNNING') await child.terminate('cleanup');
        await s.assertReplays(handle);
      });
    });
  }

  it('continues as new: result() follows the chain, the first run is CONTINUED_AS_NEW', async () => {
    const taskQueue = s.taskQueue();
    await s.withWorker(taskQueue, async () => {
      const handle = await s.env.client.workflow.start(countdown, { taskQueue, workflowId: `can-${taskQueue}`, args: [3] });
      assert.equal(await handle.result(), 'done after continuing');
      const firstRun = s.env.client.workflow.getHandle(`can-${taskQueue}`, handle.firstExecutionRunId);
      assert.equal(await statusOf(firstRun), 'CONTINUED_AS_NEW');
      const latest = s.env.client.workflow.getHandle(`can-${taskQueue}`);
      assert.equal(await statusOf(latest), 'COMPLETED');
      assert.notEqual((await latest.describe()).runId, handle.firstExecutionRunId);
      await s.assertReplays(firstRun);
      await s.assertReplays(latest);
    });
  });

  it('retries a failing workflow by its retry policy (new runs, backoff skipped) and stops at maximumAttempts', async () => {
    const taskQueue = s.taskQueue();
    await s.withWorker(taskQueue, async () => {
      const retry = { initialInterval: '1 minute', maximumAttempts: 3 };
      const handle = await s.env.client.workflow.start(succeedsOnAttempt, { taskQueue, workflowId: `wfretry-${taskQueue}`, args: [3], retry });
      assert.equal(await handle.result(), 3);
      assert.equal(await statusOf(s.env.client.workflow.getHandle(handle.workflowId, handle.firstExecutionRunId)), 'FAILED');
      await s.assertReplays(s.env.client.workflow.getHandle(handle.workflowId));

      const exhausted = await s.env.client.workflow.start(succeedsOnAttempt, { taskQueue, workflowId: `wfretry2-${taskQueue}`, args: [5], retry });
      await assert.rejects(exhausted.result(), (err: unknown) => {
        assert.ok(err instanceof WorkflowFailedError);
        assert.equal(err.retryState, RetryState.MAXIMUM_ATTEMPTS_REACHED);
        assert.ok(err.cause instanceof ApplicationFailure);
        assert.equal(err.cause.message, 'workflow attempt 3 failed');
        return true;
      });
    });
  });

  it('applies workflow-id reuse and conflict policies', async () => {
    const taskQueue = s.taskQueue();
    await s.withWorker(taskQueue, async () => {
      const workflowId = `reuse-${taskQueue}`;
      await s.env.client.workflow.execute(greeting, { taskQueue, workflowId, args: ['a'] });
      await assert.rejects(
        s.env.client.workflow.start(greeting, { taskQueue, workflowId, args: ['b'], workflowIdReusePolicy: 'REJECT_DUPLICATE' }),
        WorkflowExecutionAlreadyStartedError,
      );
      await assert.rejects(
        s.env.client.workflow.start(greeting, { taskQueue, workflowId, args: ['b'], workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY' }),
        WorkflowExecutionAlreadyStartedError,
      );
      assert.equal(await s.env.client.workflow.execute(greeting, { taskQueue, workflowId, args: ['c'] }), 'Hello, c!');

      const running = await s.env.client.workflow.start(accumulator, { taskQueue, workflowId: `${workflowId}-2` });
      const same = await s.env.client.workflow.start(accumulator, { taskQueue, workflowId: `${workflowId}-2`, workflowIdConflictPolicy: 'USE_EXISTING' });
      assert.equal(same.firstExecutionRunId, running.firstExecutionRunId);
      const replacement = await s.env.client.workflow.start(accumulator, {
        taskQueue,
        workflowId: `${workflowId}-2`,
        workflowIdConflictPolicy: 'TERMINATE_EXISTING',
      });
      assert.notEqual(replacement.firstExecutionRunId, running.firstExecutionRunId);
      assert.equal(await statusOf(s.env.client.workflow.getHandle(`${workflowId}-2`, running.firstExecutionRunId)), 'TERMINATED');
      await replacement.terminate('cleanup');
    });
  });

  it('keeps memo and search attributes, including upserts, and returns them from describe', async () => {
    const taskQueue = s.taskQueue();
    await s.withWorker(taskQueue, async () => {
      const handle = await s.env.client.workflow.start(upsertsSearchAttributes, {
        taskQueue,
        workflowId: `memo-${taskQueue}`,
        memo: { owner: 'ada', tags: ['x'] },
        searchAttributes: { CustomKeywordField: ['initial'] },
      });
      await handle.result();
      const description = await handle.describe();
      assert.deepEqual(description.memo, { owner: 'ada', tags: ['x'] });
      assert.deepEqual(description.searchAttributes.CustomKeywordField, ['upserted']);
      await s.assertReplays(handle);
    });
  });

  it('lists and counts workflows with operator queries (type, id, status, start time, AND)', async () => {
    const taskQueue = s.taskQueue();
    await s.withWorker(taskQueue, async () => {
      const since = new Date(await s.env.currentTimeMs()).toISOString();
      const done = await s.env.client.workflow.start(greeting, { taskQueue, workflowId: `list-done-${taskQueue}`, args: ['x'] });
      await done.result();
      const open = await s.env.client.workflow.start(accumulator, { taskQueue, workflowId: `list-open-${taskQueue}` });
      const byQueue = `TaskQueue = '${taskQueue}'`;
      const ids = async (query: string) => {
        const out: string[] = [];
        for await (const wf of s.env.client.workflow.list({ query })) out.push(wf.workflowId);
        return out.sort();
      };
      assert.deepEqual(await ids(byQueue), [`list-done-${taskQueue}`, `list-open-${taskQueue}`]);
      assert.deepEqual(await ids(`${byQueue} AND WorkflowType = 'greeting'`), [`list-done-${taskQueue}`]);
      assert.deepEqual(await ids(`${byQueue} AND ExecutionStatus = 'Running'`), [`list-open-${taskQueue}`]);
      assert.deepEqual(await ids(`WorkflowId = 'list-open-${taskQueue}'`), [`list-open-${taskQueue}`]);
      assert.deepEqual(await ids(`${byQueue} AND StartTime >= '${since}'`), [`list-done-${taskQueue}`, `list-open-${taskQueue}`]);
      assert.deepEqual(await ids(`${byQueue} AND StartTime < '${since}'`), []);
      assert.equal((await s.env.client.workflow.count(`${byQueue} AND ExecutionStatus = 'Completed'`)).count, 1);
      assert.equal((await s.env.client.workflow.count(byQueue)).count, 2);
      assert.deepEqual(await ids(`${byQueue} AND WorkflowType IN ('greeting', 'nothing')`), [`list-done-${taskQueue}`]);
      assert.deepEqual(
        await ids(`${byQueue} AND (WorkflowType = 'greeting' OR ExecutionStatus = 'Running')`),
        [`list-done-${taskQueue}`, `list-open-${taskQueue}`],
      );
      assert.deepEqual(await ids(`${byQueue} AND ExecutionStatus != 'Running' ORDER BY StartTime DESC`), [`list-done-${taskQueue}`]);
      await assert.rejects(ids(`${byQueue} AND WorkflowType ~ 'x'`), (err: unknown) => {
        assert.ok(err instanceof ServiceError);
        assert.match(String((err.cause as { details?: string }).details), /invalid query/);
        return true;
      });
      await open.terminate('cleanup');
    });
  });
});
