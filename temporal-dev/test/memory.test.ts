// A waiting run's state is kept compact (issue 15): history stored as encoded events and decoded when read, and
// workers that evict waiting workflows from a small cache replay them from that history correctly.
import assert from 'node:assert/strict';
import { encode, ownedCopy } from '../proto';
import { Run } from '../run';
import { useSuite } from './setup';
import { accumulator, addSignal, finishSignal, totalQuery } from './workflows';

const HISTORY_EVENT = 'temporal.api.history.v1.HistoryEvent';

function newRun(): Run {
  const started = { workflowType: { name: 'w' }, taskQueue: { name: 'q' }, input: { payloads: [{ metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('"hello"') }] } };
  return new Run('default', 'wf', 'run-1', 'run-1', 'w', 'q', 1_000, started, 10_000, 0);
}

describe('temporal-dev: compact history', () => {
  it('keeps each event encoded and gives back equal, fresh objects when read', () => {
    const run = newRun();
    run.append('WORKFLOW_EXECUTION_STARTED', run.started, 1_000);
    run.append('WORKFLOW_TASK_SCHEDULED', { taskQueue: { name: 'q' }, startToCloseTimeout: { seconds: 10 }, attempt: 1 }, 1_001);
    run.append('TIMER_STARTED', { timerId: 't1', startToFireTimeout: { seconds: 86_400 }, workflowTaskCompletedEventId: 2 }, 1_002);

    assert.equal(run.eventCount, 3);
    assert.equal(run.nextEventId, 4);
    const [started, scheduled, timer] = run.events;
    assert.equal(started!.eventId, 1);
    assert.equal(Buffer.from(started!.workflowExecutionStartedEventAttributes.input.payloads[0].data).toString(), '"hello"');
    assert.deepEqual(scheduled!.eventTime, { seconds: 1, nanos: 1_000_000 });
    assert.equal(timer!.timerStartedEventAttributes.timerId, 't1');
    assert.equal(run.lastEvent().eventId, 3);
    assert.deepEqual(run.eventsBetween(1, 2).map((e) => e.eventId), [2]);

    // Reads are copies: changing one never changes the history.
    timer!.timerStartedEventAttributes.timerId = 'changed';
    assert.equal(run.lastEvent().timerStartedEventAttributes.timerId, 't1');

    // The size the worker is told (historySizeBytes) is the encoded history's, as on the real server.
    const encodedSize = run.events.reduce((total, event) => total + encode(HISTORY_EVENT, event).length, 0);
    assert.equal(run.historySizeBytes, encodedSize);
  });

  it('gives stored bytes memory of their own, never a slice of a shared pool slab', () => {
    const pooled = Buffer.from('a payload kept for a week'); // small: a slice of Node's 8 KiB pool
    assert.ok(pooled.buffer.byteLength > pooled.length);
    const owned = ownedCopy(pooled);
    assert.equal(owned.buffer.byteLength, pooled.length);
    assert.equal(owned.toString(), 'a payload kept for a week');
  });

  it('refuses an event out of order, as before', () => {
    const run = newRun();
    assert.throws(() => run.appendEvent(run.makeEvent('WORKFLOW_TASK_SCHEDULED', {}, 1_000, 2)), /out of order/);
  });
});

describe('temporal-dev: waiting workflows evicted from a small worker cache', function () {
  const suite = useSuite();

  it('replays evicted workflows from history on each signal and finishes every one with the right result', async () => {
    const taskQueue = suite.taskQueue();
    const { client } = suite.env;
    await suite.withWorker(
      taskQueue,
      async () => {
        const handles = await Promise.all(
          Array.from({ length: 6 }, (_, i) => client.workflow.start(accumulator, { taskQueue, workflowId: `${taskQueue}-${i}` })),
        );
        // Six open runs and room for two: every round of signals evicts and replays most of them.
        for (let round = 1; round <= 3; round++) {
          for (const [i, handle] of handles.entries()) await handle.signal(addSignal, (i + 1) * round);
        }
        for (const [i, handle] of handles.entries()) assert.equal(await handle.query(totalQuery), (i + 1) * 6);
        for (const handle of handles) await handle.signal(finishSignal);
        const totals: number[] = [];
        for (const handle of handles) totals.push(await handle.result()); // one result() at a time (time-skipping lock)
        assert.deepEqual(totals, [6, 12, 18, 24, 30, 36]);
        await suite.assertReplays(handles[5]!);
      },
      { maxCachedWorkflows: 2, maxConcurrentWorkflowTaskExecutions: 2 },
    );
  });
});
