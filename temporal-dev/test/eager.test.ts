// Eager workflow start (the first workflow task comes back in the start response) and return_new_workflow_task
// (the next task comes back in the completion response), which sdk-core uses to heartbeat a workflow task while
// a local activity outlives the workflow task timeout. Driven by the real SDK, plus raw gRPC for the exact shapes.
import assert from 'node:assert/strict';
import { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createLocalEnv } from '../../test/helpers/temporal';
import { useSuite, type Suite } from './setup';
import { greeting, localGreeting, retriedLocalActivity, slowLocalActivity } from './workflows';

const EventType = temporal.api.enums.v1.EventType;

/** A client on the worker's NativeConnection: the only kind that may ask for eager start (sdk-core reserves a slot). */
function eagerClient(env: TestWorkflowEnvironment, identity: string): Client {
  return new Client({ connection: env.nativeConnection, identity });
}

function eventTypes(events: temporal.api.history.v1.IHistoryEvent[]): number[] {
  return events.map((e) => Number(e.eventType));
}

/** A workflow task timeout of 2 s and a local activity of 5 s: sdk-core must heartbeat the task (at 80 %) twice. */
async function outlivesWorkflowTaskTimeout(s: Suite, client: Client): Promise<void> {
  const taskQueue = s.taskQueue();
  await s.withWorker(taskQueue, async () => {
    const handle = await client.workflow.start(slowLocalActivity, {
      taskQueue,
      workflowId: `slow-la-${taskQueue}`,
      args: [5_000],
      workflowTaskTimeout: '2s',
    });
    assert.equal(await handle.result(), 'woke up');
    const events = (await handle.fetchHistory()).events ?? [];
    const types = eventTypes(events);
    assert.ok(!types.includes(EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT), 'the heartbeats kept the workflow task alive');
    assert.ok(!types.includes(EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED));
    const completedTasks = types.filter((t) => t === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED).length;
    assert.ok(completedTasks >= 3, `expected heartbeat completions, saw ${completedTasks} completed workflow tasks`);
    assert.equal(types.filter((t) => t === EventType.EVENT_TYPE_MARKER_RECORDED).length, 1);
    // Every task after the first came back in the completion of the one before, never through a poll.
    const laterTasks = events.filter((e) => e.workflowTaskStartedEventAttributes).slice(1);
    assert.deepEqual(
      laterTasks.map((e) => e.workflowTaskStartedEventAttributes!.requestId),
      laterTasks.map(() => 'request-from-RespondWorkflowTaskCompleted'),
    );
    await s.assertReplays(handle);
  });
}

describe('temporal-dev: eager workflow start and local-activity heartbeats (real clock)', function () {
  const s = useSuite(createLocalEnv);

  it('starts a workflow eagerly from a client on the worker connection: the first task never goes through a poll', async () => {
    const taskQueue = s.taskQueue();
    const client = eagerClient(s.env, 'eager-starter');
    await s.withWorker(taskQueue, async () => {
      const handle = await client.workflow.start(localGreeting, {
        taskQueue,
        workflowId: `eager-start-${taskQueue}`,
        args: ['Eve'],
        requestEagerStart: true,
      });
      assert.equal(handle.eagerlyStarted, true);
      assert.equal(await handle.result(), 'Hello, Eve!');
      const events = (await handle.fetchHistory()).events ?? [];
      assert.deepEqual(eventTypes(events.slice(0, 3)), [
        EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
        EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
        EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED,
      ]);
      // Started on behalf of the starting client, as the real server records it, and taken up by the worker at once
      // (a task the worker had rejected would time out and show up as a retry).
      assert.equal(events[2]!.workflowTaskStartedEventAttributes?.identity, 'eager-starter');
      assert.equal(Number(events[3]?.eventType), EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
      await s.assertReplays(handle);
    });
  });

  it('does not start eagerly with a start delay or when an existing run is used', async () => {
    const taskQueue = s.taskQueue();
    const client = eagerClient(s.env, 'eager-starter');
    await s.withWorker(taskQueue, async () => {
      const delayed = await client.workflow.start(greeting, {
        taskQueue,
        workflowId: `eager-delayed-${taskQueue}`,
        args: ['Del'],
        requestEagerStart: true,
        startDelay: '10ms',
      });
      assert.equal(delayed.eagerlyStarted, false);
      assert.equal(await delayed.result(), 'Hello, Del!');

      const first = await client.workflow.start(slowLocalActivity, { taskQueue, workflowId: `eager-existing-${taskQueue}`, args: [500] });
      const again = await client.workflow.start(slowLocalActivity, {
        taskQueue,
        workflowId: `eager-existing-${taskQueue}`,
        args: [500],
        requestEagerStart: true,
        workflowIdConflictPolicy: 'USE_EXISTING',
      });
      assert.equal(again.eagerlyStarted, false);
      assert.equal(again.firstExecutionRunId, first.firstExecutionRunId);
      assert.equal(await again.result(), 'woke up');
    });
  });

  it('completes a local activity that runs longer than the workflow task timeout (the task is heartbeated)', async () => {
    await outlivesWorkflowTaskTimeout(s, s.env.client);
  });

  it('runs an eagerly started workflow whose local activity outlives the workflow task timeout', async () => {
    await outlivesWorkflowTaskTimeout(s, eagerClient(s.env, 'eager-starter'));
  });

  it('retries a failing local activity by its retry policy and completes the workflow', async () => {
    const taskQueue = s.taskQueue();
    await s.withWorker(taskQueue, async () => {
      const handle = await s.env.client.workflow.start(retriedLocalActivity, { taskQueue, workflowId: `la-retry-${taskQueue}`, args: [3] });
      assert.equal(await handle.result(), 3);
      await s.assertReplays(handle);
    });
  });
});

describe('temporal-dev: eager start and return_new_workflow_task over raw gRPC', function () {
  const s = useSuite(createLocalEnv);

  it('returns the first task in the start response and the next task in the completion response', async () => {
    const taskQueue = s.taskQueue();
    const service = s.env.client.workflowService;
    const workflowId = `raw-eager-${taskQueue}`;
    const start = await service.startWorkflowExecution({
      namespace: 'default',
      workflowId,
      workflowType: { name: 'accumulator' },
      taskQueue: { name: taskQueue },
      requestId: `raw-eager-${taskQueue}`,
      identity: 'raw-starter',
      requestEagerExecution: true,
    });
    const first = start.eagerWorkflowTask;
    assert.ok(first?.taskToken?.length, 'the start response carries a started workflow task');
    assert.equal(start.started, true);
    assert.equal(first.workflowExecution?.runId, start.runId);
    assert.equal(first.workflowType?.name, 'accumulator');
    assert.equal(first.workflowExecutionTaskQueue?.name, taskQueue);
    assert.equal(Number(first.startedEventId), 3);
    assert.deepEqual(eventTypes(first.history?.events ?? []), [
      EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
      EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
      EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED,
    ]);

    // The same request again (a client retry) is deduplicated: no second run, no second task.
    const retried = await service.startWorkflowExecution({
      namespace: 'default',
      workflowId,
      workflowType: { name: 'accumulator' },
      taskQueue: { name: taskQueue },
      requestId: `raw-eager-${taskQueue}`,
      identity: 'raw-starter',
      requestEagerExecution: true,
    });
    assert.equal(retried.runId, start.runId);
    assert.equal(retried.eagerWorkflowTask, null);

    // Heartbeat: no commands, force a new task and ask for it back, as sdk-core does while a local activity runs.
    const heartbeat = await service.respondWorkflowTaskCompleted({
      namespace: 'default',
      taskToken: first.taskToken,
      identity: 'raw-worker',
      forceCreateNewWorkflowTask: true,
      returnNewWorkflowTask: true,
    });
    const next = heartbeat.workflowTask;
    assert.ok(next?.taskToken?.length, 'the completion response carries the new, already started task');
    assert.equal(Number(next.previousStartedEventId), 3);
    assert.equal(Number(next.startedEventId), 6);
    // Partial history, as the real server returns it (the worker has the rest cached).
    assert.deepEqual(
      (next.history?.events ?? []).map((e) => [Number(e.eventId), Number(e.eventType)]),
      [
        [4, EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED],
        [5, EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED],
        [6, EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED],
      ],
    );
    assert.equal(next.history?.events?.[2]?.workflowTaskStartedEventAttributes?.identity, 'raw-worker');

    // Completing without asking for a task back, and with nothing new to do, schedules none.
    const done = await service.respondWorkflowTaskCompleted({
      namespace: 'default',
      taskToken: next.taskToken,
      identity: 'raw-worker',
      returnNewWorkflowTask: true,
    });
    assert.equal(done.workflowTask, null);
    const description = await s.env.client.workflow.getHandle(workflowId).describe();
    assert.equal(description.raw.pendingWorkflowTask, null);
    await s.env.client.workflow.getHandle(workflowId).terminate('cleanup');
  });

  it('does not hand a task out eagerly for signal-with-start (the real server does not either)', async () => {
    const taskQueue = s.taskQueue();
    const service = s.env.client.workflowService;
    const response = await service.signalWithStartWorkflowExecution({
      namespace: 'default',
      workflowId: `raw-sws-${taskQueue}`,
      workflowType: { name: 'accumulator' },
      taskQueue: { name: taskQueue },
      signalName: 'add',
      identity: 'raw-starter',
    });
    assert.equal(response.started, true);
    const description = await s.env.client.workflow.getHandle(`raw-sws-${taskQueue}`).describe();
    assert.equal(description.raw.pendingWorkflowTask?.state, temporal.api.enums.v1.PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_SCHEDULED);
    await s.env.client.workflow.getHandle(`raw-sws-${taskQueue}`).terminate('cleanup');
  });
});

describe('temporal-dev: local-activity heartbeats (time skipping)', function () {
  const s = useSuite();

  it('completes a local activity that runs longer than the workflow task timeout; time does not skip meanwhile', async () => {
    const started = Date.now();
    await outlivesWorkflowTaskTimeout(s, s.env.client);
    assert.ok(Date.now() - started >= 5_000, 'the local activity ran in real time');
  });
});
