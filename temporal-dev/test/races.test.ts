// Concurrency the server must order correctly: signal bursts racing with completion (events held back while a
// workflow task runs, UNHANDLED_COMMAND), local activities, and commands that reach other workflows.
import assert from 'node:assert/strict';
import { WorkflowFailedError } from '@temporalio/client';
import { CancelledFailure, defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { useSuite } from './setup';
import { accumulator, addSignal, awaitsAsyncActivity, cancelsAnother, finishSignal, localGreeting, signalsAnother, waitsADay } from './workflows';

describe('temporal-dev: races and cross-workflow commands', function () {
  const s = useSuite();

  it('keeps every signal of bursts to 20 workflows, also when they race with completion', async () => {
    const taskQueue = s.taskQueue();
    await s.withWorker(taskQueue, async () => {
      const handles = await Promise.all(
        Array.from({ length: 20 }, (_, i) => s.env.client.workflow.start(accumulator, { taskQueue, workflowId: `burst-${i}-${taskQueue}` })),
      );
      await Promise.all(handles.map((h) => Promise.all(Array.from({ length: 30 }, (_, k) => h.signal(addSignal, k)))));
      // Finish and a few more adds at once: some adds may arrive while the completing task runs.
      await Promise.all(
        handles.map((h) => Promise.allSettled([h.signal(finishSignal), ...Array.from({ length: 5 }, () => h.signal(addSignal, 1000))])),
      );
      const histories = [];
      for (const h of handles) {
        const result = await h.result();
        const history = await h.fetchHistory();
        histories.push({ workflowId: h.workflowId, history });
        const signalled = history.events!
          .filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'add')
          .map((e) => defaultPayloadConverter.fromPayload<number>(e.workflowExecutionSignaledEventAttributes!.input!.payloads![0]!))
          .reduce((a, b) => a + b, 0);
        assert.equal(result, signalled, 'the result counts exactly the signals in history');
        assert.ok(result >= 435);
      }
      for await (const replay of Worker.runReplayHistories({ workflowBundle: s.bundle }, histories)) {
        assert.equal(replay.error, undefined, `replay of ${replay.workflowId} failed: ${String(replay.error)}`);
      }
    });
  });

  it('lets the client heartbeat and complete an activity asynchronously (by workflow and activity id)', async () => {
    const taskQueue = s.taskQueue();
    await s.withWorker(taskQueue, async () => {
      const handle = await s.env.client.workflow.start(awaitsAsyncActivity, { taskQueue, workflowId: `async-${taskQueue}` });
      const deadline = Date.now() + 10_000;
      while ((await handle.describe()).raw.pendingActivities?.[0]?.state !== temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED) {
        if (Date.now() > deadline) assert.fail('the activity never started');
        await new Promise((r) => setTimeout(r, 50));
      }
      const activity = { workflowId: handle.workflowId, activityId: '1' };
      await s.env.client.activity.heartbeat(activity, 'half way');
      assert.deepEqual((await handle.describe()).raw.pendingActivities?.[0]?.heartbeatDetails?.payloads?.length, 1);
      await s.env.client.activity.complete(activity, 'done elsewhere');
      assert.equal(await handle.result(), 'done elsewhere');
      await s.assertReplays(handle);
    });
  });

  it('runs local activities', async () => {
    const taskQueue = s.taskQueue();
    await s.withWorker(taskQueue, async () => {
      const handle = await s.env.client.workflow.start(localGreeting, { taskQueue, workflowId: `local-${taskQueue}`, args: ['Lu'] });
      assert.equal(await handle.result(), 'Hello, Lu!');
      await s.assertReplays(handle);
    });
  });

  it('signals and cancels other workflows from a workflow', async () => {
    const taskQueue = s.taskQueue();
    await s.withWorker(taskQueue, async () => {
      const target = await s.env.client.workflow.start(accumulator, { taskQueue, workflowId: `target-${taskQueue}` });
      const signaller = await s.env.client.workflow.start(signalsAnother, { taskQueue, workflowId: `signaller-${taskQueue}`, args: [target.workflowId] });
      await signaller.result();
      assert.equal(await target.result(), 9);
      await s.assertReplays(signaller);

      const sleeper = await s.env.client.workflow.start(waitsADay, { taskQueue, workflowId: `victim-${taskQueue}` });
      const canceller = await s.env.client.workflow.start(cancelsAnother, { taskQueue, workflowId: `canceller-${taskQueue}`, args: [sleeper.workflowId] });
      await canceller.result();
      await assert.rejects(sleeper.result(), (err: unknown) => err instanceof WorkflowFailedError && err.cause instanceof CancelledFailure);
      await s.assertReplays(canceller);
      await s.assertReplays(sleeper);
    });
  });
});
