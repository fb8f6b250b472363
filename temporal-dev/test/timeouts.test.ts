// The four activity timeouts, heartbeats, activity cancellation, and workflow run / execution timeouts.
import assert from 'node:assert/strict';
import { WorkflowFailedError } from '@temporalio/client';
import { ActivityFailure, RetryState, TimeoutFailure, TimeoutType } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { useSuite } from './setup';
import { activityWithTimeouts, cancelsActivity, greeting, runsSleepy, sleepsForever } from './workflows';

function assertActivityTimeout(err: unknown, timeoutType: TimeoutType): TimeoutFailure {
  assert.ok(err instanceof WorkflowFailedError, `expected WorkflowFailedError, got ${String(err)}`);
  assert.ok(err.cause instanceof ActivityFailure, `expected ActivityFailure, got ${String(err.cause)}`);
  assert.ok(err.cause.cause instanceof TimeoutFailure, `expected TimeoutFailure, got ${String(err.cause.cause)}`);
  assert.equal(err.cause.cause.timeoutType, timeoutType);
  return err.cause.cause;
}

describe('temporal-dev: timeouts, heartbeats and cancellation', function () {
  const s = useSuite();

  it('times out an attempt after start-to-close', async () => {
    const taskQueue = s.taskQueue();
    await s.withWorker(taskQueue, async () => {
      const handle = await s.env.client.workflow.start(activityWithTimeouts, {
        taskQueue,
        workflowId: `stc-${taskQueue}`,
        args: ['sleepy', { startToCloseMs: 400, maximumAttempts: 2 }],
      });
      await assert.rejects(handle.result(), (err: unknown) => {
        assertActivityTimeout(err, TimeoutType.START_TO_CLOSE);
        assert.equal((err as WorkflowFailedError & { cause: ActivityFailure }).cause.retryState, RetryState.MAXIMUM_ATTEMPTS_REACHED);
        return true;
      });
      const started = (await handle.fetchHistory()).events!.find((e) => e.activityTaskStartedEventAttributes);
      assert.equal(started?.activityTaskStartedEventAttributes?.attempt, 2);
      await s.assertReplays(handle);
    });
  });

  it('times out on missing heartbeats and hands the last heartbeat details to the next attempt', async () => {
    const taskQueue = s.taskQueue();
    await s.withWorker(taskQueue, async () => {
      const handle = await s.env.client.workflow.start(activityWithTimeouts, {
        taskQueue,
        workflowId: `hb-${taskQueue}`,
        args: ['heartbeatOnceThenHang', { startToCloseMs: 60_000, heartbeatMs: 500, maximumAttempts: 2 }],
      });
      await assert.rejects(handle.result(), (err: unknown) => {
        const timeout = assertActivityTimeout(err, TimeoutType.HEARTBEAT);
        assert.deepEqual(timeout.lastHeartbeatDetails, 2, 'the second attempt resumed from the first one\'s heartbeat');
        return true;
      });
      await s.assertReplays(handle);
    });
  });

  it('times out schedule-to-start when no worker polls the activity queue (time skips past it)', async () => {
    const taskQueue = s.taskQueue();
    await s.withWorker(taskQueue, async () => {
      const t0 = Date.now();
      const handle = await s.env.client.workflow.start(activityWithTimeouts, {
        taskQueue,
        workflowId: `sts-${taskQueue}`,
        args: ['sleepy', { startToCloseMs: 1000, scheduleToStartMs: 3_600_000, taskQueue: `${taskQueue}-nobody` }],
      });
      await assert.rejects(handle.result(), (err: unknown) => {
        assertActivityTimeout(err, TimeoutType.SCHEDULE_TO_START);
        return true;
      });
      assert.ok(Date.now() - t0 < 10_000, 'an hour of schedule-to-start passed in seconds');
      await s.assertReplays(handle);
    });
  });

  it('times out schedule-to-close across attempts', async () => {
    const taskQueue = s.taskQueue();
    await s.withWorker(taskQueue, async () => {
      const handle = await s.env.client.workflow.start(activityWithTimeouts, {
        taskQueue,
        workflowId: `stcl-${taskQueue}`,
        args: ['sleepy', { startToCloseMs: 5000, scheduleToCloseMs: 500, maximumAttempts: 100 }],
      });
      await assert.rejects(handle.result(), (err: unknown) => {
        assertActivityTimeout(err, TimeoutType.SCHEDULE_TO_CLOSE);
        return true;
      });
      await s.assertReplays(handle);
    });
  });

  it('cancels a running activity: the worker sees cancel_requested on heartbeat and reports it cancelled', async () => {
    const taskQueue = s.taskQueue();
    await s.withWorker(taskQueue, async () => {
      const handle = await s.env.client.workflow.start(cancelsActivity, { taskQueue, workflowId: `actcancel-${taskQueue}` });
      assert.equal(await handle.result(), 'cancelled');
      const types = (await handle.fetchHistory()).events!.map((e) => e.eventType);
      const { EventType } = temporal.api.enums.v1;
      assert.ok(types.includes(EventType.EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED));
      assert.ok(types.includes(EventType.EVENT_TYPE_ACTIVITY_TASK_CANCELED));
      await s.assertReplays(handle);
    });
  });

  it('does not skip time while an activity runs, even during env.sleep()', async () => {
    const taskQueue = s.taskQueue();
    await s.withWorker(taskQueue, async () => {
      const handle = await s.env.client.workflow.start(runsSleepy, { taskQueue, workflowId: `nosleepskip-${taskQueue}`, args: [500, 3000] });
      await s.env.sleep('1 day');
      assert.equal(await handle.result(), 'woke up', 'the 3 s start-to-close timeout did not fire in skipped time');
    });
  });

  it('times out a workflow run (status TIMED_OUT, WorkflowFailedError -> TimeoutFailure)', async () => {
    const taskQueue = s.taskQueue();
    await s.withWorker(taskQueue, async () => {
      const t0 = Date.now();
      const handle = await s.env.client.workflow.start(sleepsForever, { taskQueue, workflowId: `wrt-${taskQueue}`, workflowRunTimeout: '1 hour' });
      await assert.rejects(handle.result(), (err: unknown) => {
        assert.ok(err instanceof WorkflowFailedError);
        assert.ok(err.cause instanceof TimeoutFailure);
        return true;
      });
      assert.ok(Date.now() - t0 < 5000);
      assert.equal((await handle.describe()).status.name, 'TIMED_OUT');
      await s.assertReplays(handle);
    });
  });

  it('delays the first workflow task by startDelay (skipped in time-skipping mode)', async () => {
    const taskQueue = s.taskQueue();
    await s.withWorker(taskQueue, async () => {
      const before = await s.env.currentTimeMs();
      const handle = await s.env.client.workflow.start(greeting, { taskQueue, workflowId: `delay-${taskQueue}`, args: ['later'], startDelay: '1 hour' });
      assert.equal(await handle.result(), 'Hello, later!');
      assert.ok((await s.env.currentTimeMs()) - before >= 3_600_000);
      const description = await handle.describe();
      assert.ok(description.executionTime!.getTime() - description.startTime.getTime() >= 3_600_000);
      await s.assertReplays(handle);
    });
  });

  it('times out a workflow execution', async () => {
    const taskQueue = s.taskQueue();
    await s.withWorker(taskQueue, async () => {
      const handle = await s.env.client.workflow.start(sleepsForever, {
        taskQueue,
        workflowId: `wet-${taskQueue}`,
        workflowExecutionTimeout: '2 hours',
      });
      await assert.rejects(handle.result(), WorkflowFailedError);
      const description = await handle.describe();
      assert.equal(description.status.name, 'TIMED_OUT');
      assert.equal(description.raw.executionConfig?.workflowExecutionTimeout?.seconds?.toString(), '7200');
    });
  });
});
