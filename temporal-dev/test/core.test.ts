// Start, poll, complete; activities with retries; failures with the SDK's error classes; timers under time
// skipping; signals, queries, describe, cancel, terminate; every history replays.
import assert from 'node:assert/strict';
import { WorkflowExecutionAlreadyStartedError, WorkflowFailedError, WorkflowNotFoundError, QueryNotRegisteredError } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure, CancelledFailure, RetryState, TerminatedFailure } from '@temporalio/common';
import { msToTs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { useSuite } from './setup';
import {
  abandonsSlowActivity,
  accumulator,
  addSignal,
  exhaustsRetries,
  failsItsWorkflowTask,
  failingQuery,
  failsNonRetryably,
  finishSignal,
  greeting,
  retried,
  sleeper,
  throwsApplicationError,
  totalQuery,
  waitsADay,
  waitsForSignalOrTimeout,
} from './workflows';

const DAY = 24 * 3600 * 1000;

describe('temporal-dev: core workflow lifecycle', function () {
  const s = useSuite();

  it('completes a workflow that calls an activity, and its history replays', async () => {
    const taskQueue = s.taskQueue();
    await s.withWorker(taskQueue, async () => {
      const handle = await s.env.client.workflow.start(greeting, { taskQueue, workflowId: `greet-${taskQueue}`, args: ['Ada'] });
      assert.equal(await handle.result(), 'Hello, Ada!');
      const description = await handle.describe();
      assert.equal(description.status.name, 'COMPLETED');
      assert.equal(description.type, 'greeting');
      assert.equal(description.taskQueue, taskQueue);
      await s.assertReplays(handle);
    });
  });

  it('retries a failing activity with backoff until it succeeds, skipping the backoff time', async () => {
    const taskQueue = s.taskQueue();
    await s.withWorker(taskQueue, async () => {
      const handle = await s.env.client.workflow.start(retried, { taskQueue, workflowId: `retry-${taskQueue}`, args: [3] });
      assert.equal(await handle.result(), 3);
      const events = (await handle.fetchHistory()).events ?? [];
      const started = events.filter((e) => e.activityTaskStartedEventAttributes);
      assert.equal(started.length, 1, 'retries leave no trace in history');
      assert.equal(started[0]!.activityTaskStartedEventAttributes!.attempt, 3);
      assert.match(started[0]!.activityTaskStartedEventAttributes!.lastFailure?.message ?? '', /flaky failure on attempt 2/);
      await s.assertReplays(handle);
    });
  });

  it('fails with WorkflowFailedError -> ActivityFailure -> ApplicationFailure for a non-retryable activity error', async () => {
    const taskQueue = s.taskQueue();
    await s.withWorker(taskQueue, async () => {
      const handle = await s.env.client.workflow.start(failsNonRetryably, { taskQueue, workflowId: `nonretry-${taskQueue}` });
      const err = await handle.result().then(
        () => assert.fail('expected failure'),
        (e: unknown) => e,
      );
      assert.ok(err instanceof WorkflowFailedError);
      assert.ok(err.cause instanceof ActivityFailure);
      assert.equal(err.cause.retryState, RetryState.NON_RETRYABLE_FAILURE);
      assert.ok(err.cause.cause instanceof ApplicationFailure);
      assert.equal(err.cause.cause.type, 'BadInput');
      assert.equal(err.cause.cause.message, 'bad input');
      assert.deepEqual(err.cause.cause.details, [{ detail: 1 }]);
      assert.equal((await handle.describe()).status.name, 'FAILED');
      await s.assertReplays(handle);
    });
  });

  it('gives up after maximumAttempts with retry state MAXIMUM_ATTEMPTS_REACHED', async () => {
    const taskQueue = s.taskQueue();
    await s.withWorker(taskQueue, async () => {
      const handle = await s.env.client.workflow.start(exhaustsRetries, { taskQueue, workflowId: `exhaust-${taskQueue}` });
      await assert.rejects(handle.result(), (err: unknown) => {
        assert.ok(err instanceof WorkflowFailedError);
        assert.ok(err.cause instanceof ActivityFailure);
        assert.equal(err.cause.retryState, RetryState.MAXIMUM_ATTEMPTS_REACHED);
        assert.ok(err.cause.cause instanceof ApplicationFailure);
        assert.equal(err.cause.cause.type, 'Flaky');
        return true;
      });
      const started = (await handle.fetchHistory()).events!.find((e) => e.activityTaskStartedEventAttributes);
      assert.equal(started?.activityTaskStartedEventAttributes?.attempt, 3);
    });
  });

  it('reports a workflow ApplicationFailure as WorkflowFailedError -> ApplicationFailure', async () => {
    const taskQueue = s.taskQueue();
    await s.withWorker(taskQueue, async () => {
      await assert.rejects(s.env.client.workflow.execute(throwsApplicationError, { taskQueue, workflowId: `wferr-${taskQueue}` }), (err: unknown) => {
        assert.ok(err instanceof WorkflowFailedError);
        assert.ok(err.cause instanceof ApplicationFailure);
        assert.equal(err.cause.type, 'WorkflowRefusal');
        assert.equal(err.cause.message, 'workflow says no');
        return true;
      });
    });
  });

  it('fires a 24-hour timer in well under a second of real time', async () => {
    const taskQueue = s.taskQueue();
    await s.withWorker(taskQueue, async () => {
      const before = await s.env.currentTimeMs();
      const handle = await s.env.client.workflow.start(sleeper, { taskQueue, workflowId: `timer-${taskQueue}`, args: [DAY] });
      // Time is locked until result() is awaited: wait for the timer to be started, then measure.
      while (!(await handle.fetchHistory()).events!.some((e) => e.timerStartedEventAttributes)) {
        await new Promise((r) => setTimeout(r, 20));
      }
      const t0 = Date.now();
      const sleptMs = await handle.result();
      const realMs = Date.now() - t0;
      assert.ok(realMs < 1000, `24 h timer took ${realMs} ms of real time`);
      assert.ok(sleptMs >= DAY, `workflow saw ${sleptMs} ms pass`);
      assert.ok((await s.env.currentTimeMs()) - before >= DAY);
      await s.assertReplays(handle);
    });
  });

  it('waits for a signal or a deadline (condition with timeout), cancelling the timer when the signal wins', async () => {
    const taskQueue = s.taskQueue();
    await s.withWorker(taskQueue, async () => {
      const early = await s.env.client.workflow.start(waitsForSignalOrTimeout, { taskQueue, workflowId: `early-${taskQueue}`, args: [DAY] });
      // Signalled once the deadline timer runs: a signal that reaches the first workflow task leaves no timer to cancel.
      while (!(await early.fetchHistory()).events!.some((e) => e.timerStartedEventAttributes)) await new Promise((resolve) => setTimeout(resolve, 20));
      await early.signal(finishSignal);
      assert.equal(await early.result(), 'signalled');
      assert.ok((await early.fetchHistory()).events!.some((e) => e.timerCanceledEventAttributes), 'the deadline timer was cancelled');
      await s.assertReplays(early);
      const late = await s.env.client.workflow.start(waitsForSignalOrTimeout, { taskQueue, workflowId: `late-${taskQueue}`, args: [DAY] });
      assert.equal(await late.result(), 'timed out');
      await s.assertReplays(late);
    });
  });

  it('lets a workflow give up on a running activity (TRY_CANCEL) and complete', async () => {
    const taskQueue = s.taskQueue();
    await s.withWorker(taskQueue, async () => {
      const handle = await s.env.client.workflow.start(abandonsSlowActivity, { taskQueue, workflowId: `abandon-${taskQueue}` });
      assert.equal(await handle.result(), 'gave up');
      await s.assertReplays(handle);
    });
  });

  it('skips time for env.sleep()', async () => {
    const before = await s.env.currentTimeMs();
    const t0 = Date.now();
    await s.env.sleep('3 hours');
    assert.ok(Date.now() - t0 < 1000);
    assert.ok((await s.env.currentTimeMs()) - before >= 3 * 3600 * 1000);
  });

  it('delivers signals, answers queries (and query failures), and completes on a finish signal', async () => {
    const taskQueue = s.taskQueue();
    await s.withWorker(taskQueue, async () => {
      const handle = await s.env.client.workflow.start(accumulator, { taskQueue, workflowId: `acc-${taskQueue}` });
      await handle.signal(addSignal, 2);
      await handle.signal(addSignal, 3);
      assert.equal(await handle.query(totalQuery), 5);
      await assert.rejects(handle.query(failingQuery), (err: unknown) => {
        assert.ok(err instanceof QueryNotRegisteredError);
        assert.match(err.message, /query handler failed/);
        return true;
      });
      await assert.rejects(handle.query('noSuchQuery'), QueryNotRegisteredError);
      const description = await handle.describe();
      assert.equal(description.status.name, 'RUNNING');
      await handle.signal(finishSignal);
      assert.equal(await handle.result(), 5);
      assert.equal(await handle.query(totalQuery), 5, 'a closed workflow still answers queries');
      await s.assertReplays(handle);
    });
  });

  it('answers a query sent before any worker polled (it rides with the first workflow task)', async () => {
    const taskQueue = s.taskQueue();
    const handle = await s.env.client.workflow.start(accumulator, { taskQueue, workflowId: `earlyq-${taskQueue}` });
    const answer = handle.query(totalQuery);
    await new Promise((r) => setTimeout(r, 200));
    await s.withWorker(taskQueue, async () => {
      assert.equal(await answer, 0);
      await handle.signal(addSignal, 4);
      assert.equal(await handle.query(totalQuery), 4);
      await handle.signal(finishSignal);
      assert.equal(await handle.result(), 4);
      await s.assertReplays(handle);
    });
  });

  it('rejects a second start with the same id (WorkflowExecutionAlreadyStartedError), dedups by request id', async () => {
    const taskQueue = s.taskQueue();
    const workflowId = `dup-${taskQueue}`;
    const first = await s.env.client.workflow.start(accumulator, { taskQueue, workflowId });
    await assert.rejects(s.env.client.workflow.start(accumulator, { taskQueue, workflowId }), (err: unknown) => {
      assert.ok(err instanceof WorkflowExecutionAlreadyStartedError);
      assert.equal(err.workflowId, workflowId);
      return true;
    });
    const raw = s.env.client.workflowService;
    const request = {
      namespace: 'default',
      workflowId: `${workflowId}-raw`,
      workflowType: { name: 'accumulator' },
      taskQueue: { name: taskQueue },
      requestId: 'same-request',
      identity: 'test',
    };
    const a = await raw.startWorkflowExecution(request);
    const b = await raw.startWorkflowExecution(request);
    assert.equal(b.runId, a.runId, 'the same request id returns the same run');
    await first.terminate('cleanup');
    await s.env.client.workflow.getHandle(`${workflowId}-raw`).terminate('cleanup');
  });

  it('records a failed workflow task once and retries it transiently, leaving the workflow running', async () => {
    const taskQueue = s.taskQueue();
    await s.withWorker(taskQueue, async () => {
      // The SDK reports only the first failure; later attempts time out (here after 1 s) and stay transient.
      const handle = await s.env.client.workflow.start(failsItsWorkflowTask, { taskQueue, workflowId: `wftfail-${taskQueue}`, workflowTaskTimeout: '1s' });
      const deadline = Date.now() + 15_000;
      let attempt = 0;
      while (attempt < 3 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        attempt = (await handle.describe()).raw.pendingWorkflowTask?.attempt ?? 0;
      }
      assert.ok(attempt >= 3, `workflow task attempt ${attempt}`);
      const events = (await handle.fetchHistory()).events!;
      const failed = events.filter((e) => e.workflowTaskFailedEventAttributes);
      assert.equal(failed.length, 1);
      assert.match(failed[0]!.workflowTaskFailedEventAttributes!.failure?.message ?? '', /bug in workflow code/);
      assert.equal(events.filter((e) => e.workflowTaskTimedOutEventAttributes).length, 0, 'retries leave no events');
      assert.equal((await handle.describe()).status.name, 'RUNNING');
      await handle.terminate('cleanup');
    });
  });

  it('hands an activity the completing worker asked to run eagerly back in the completion (same task queue only)', async () => {
    const taskQueue = s.taskQueue();
    const service = s.env.client.workflowService;
    const workflowId = `eager-${taskQueue}`;
    await service.startWorkflowExecution({
      namespace: 'default',
      workflowId,
      workflowType: { name: 'accumulator' },
      taskQueue: { name: taskQueue },
      requestId: `eager-${taskQueue}`,
      identity: 'test',
    });
    const task = await service.pollWorkflowTaskQueue({ namespace: 'default', taskQueue: { name: taskQueue }, identity: 'raw-worker' });
    const schedule = (activityId: string, queue: string, requestEagerExecution: boolean) => ({
      commandType: temporal.api.enums.v1.CommandType.COMMAND_TYPE_SCHEDULE_ACTIVITY_TASK,
      scheduleActivityTaskCommandAttributes: {
        activityId,
        activityType: { name: 'echo' },
        taskQueue: { name: queue },
        startToCloseTimeout: msToTs('1 minute'),
        requestEagerExecution,
      },
    });
    const completed: temporal.api.workflowservice.v1.IRespondWorkflowTaskCompletedResponse = await service.respondWorkflowTaskCompleted({
      namespace: 'default',
      taskToken: task.taskToken,
      identity: 'raw-worker',
      commands: [schedule('eager', taskQueue, true), schedule('queued', taskQueue, false), schedule('elsewhere', `${taskQueue}-other`, true)],
    });
    assert.deepEqual(completed.activityTasks?.map((t) => [t.activityId, t.attempt]), [['eager', 1]]);
    const pending = (await s.env.client.workflow.getHandle(workflowId).describe()).raw.pendingActivities ?? [];
    assert.deepEqual(
      pending.map((a) => [a.activityId, a.state]),
      [
        ['eager', temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED],
        ['queued', temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED],
        ['elsewhere', temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED],
      ],
    );
    // The eager task is a started attempt like a polled one: its token completes it.
    await service.respondActivityTaskCompleted({ namespace: 'default', taskToken: completed.activityTasks![0]!.taskToken, identity: 'raw-worker' });
    const events = (await s.env.client.workflow.getHandle(workflowId).fetchHistory()).events!;
    const started = events.find((e) => e.activityTaskStartedEventAttributes);
    assert.equal(started?.activityTaskStartedEventAttributes?.identity, 'raw-worker');
    assert.ok(events.some((e) => e.activityTaskCompletedEventAttributes));
    await s.env.client.workflow.getHandle(workflowId).terminate('cleanup');
  });

  it('long-polls history for new events', async () => {
    const taskQueue = s.taskQueue();
    await s.withWorker(taskQueue, async () => {
      const handle = await s.env.client.workflow.start(accumulator, { taskQueue, workflowId: `longpoll-${taskQueue}` });
      const service = s.env.client.workflowService;
      const execution = { workflowId: handle.workflowId };
      let page = await service.getWorkflowExecutionHistory({ namespace: 'default', execution, waitNewEvent: true });
      let seen = page.history?.events?.length ?? 0;
      while (page.nextPageToken?.length && seen < 4) {
        page = await service.getWorkflowExecutionHistory({ namespace: 'default', execution, waitNewEvent: true, nextPageToken: page.nextPageToken });
        seen += page.history?.events?.length ?? 0;
      }
      const waiting = service.getWorkflowExecutionHistory({ namespace: 'default', execution, waitNewEvent: true, nextPageToken: page.nextPageToken });
      await new Promise((r) => setTimeout(r, 100));
      await handle.signal(addSignal, 1);
      const next = await waiting;
      assert.equal(next.history?.events?.[0]?.workflowExecutionSignaledEventAttributes?.signalName, 'add');
      await handle.terminate('cleanup');
    });
  });

  it('throws WorkflowNotFoundError for unknown workflows', async () => {
    const handle = s.env.client.workflow.getHandle('no-such-workflow');
    await assert.rejects(handle.describe(), WorkflowNotFoundError);
    await assert.rejects(handle.signal(finishSignal), WorkflowNotFoundError);
    await assert.rejects(handle.result(), WorkflowNotFoundError);
  });

  it('cancels a workflow: the result is WorkflowFailedError -> CancelledFailure, status CANCELLED', async () => {
    const taskQueue = s.taskQueue();
    await s.withWorker(taskQueue, async () => {
      const handle = await s.env.client.workflow.start(waitsADay, { taskQueue, workflowId: `cancel-${taskQueue}` });
      await handle.query('__stack_trace'); // the first workflow task has run
      await handle.cancel();
      await assert.rejects(handle.result(), (err: unknown) => {
        assert.ok(err instanceof WorkflowFailedError);
        assert.ok(err.cause instanceof CancelledFailure);
        return true;
      });
      assert.equal((await handle.describe()).status.name, 'CANCELLED');
      await s.assertReplays(handle);
    });
  });

  it('terminates a workflow: TerminatedFailure with the reason, status TERMINATED, signals then fail', async () => {
    const taskQueue = s.taskQueue();
    await s.withWorker(taskQueue, async () => {
      const handle = await s.env.client.workflow.start(waitsADay, { taskQueue, workflowId: `term-${taskQueue}` });
      await handle.terminate('operator said so');
      await assert.rejects(handle.result(), (err: unknown) => {
        assert.ok(err instanceof WorkflowFailedError);
        assert.ok(err.cause instanceof TerminatedFailure);
        assert.equal(err.message, 'operator said so');
        return true;
      });
      assert.equal((await handle.describe()).status.name, 'TERMINATED');
      await assert.rejects(handle.signal(finishSignal), WorkflowNotFoundError);
      await s.assertReplays(handle);
    });
  });
});
