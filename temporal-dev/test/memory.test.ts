// A waiting run's state is kept compact (issue 15): history stored as encoded events and decoded when read, and
// workers that evict waiting workflows from a small cache replay them from that history correctly.
import assert from 'node:assert/strict';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { encode, ownedCopy } from '../proto';
import { Run } from '../run';
import { useSuite } from './setup';
import { bytesPerWaitingRun } from './waiting-runs';
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

describe('temporal-dev: a waiting run kept compact', () => {
  it('reads the start attributes from the first event once it is appended (no second copy kept)', () => {
    const run = newRun();
    assert.equal(Buffer.from(run.started.input.payloads[0].data).toString(), '"hello"');
    run.append('WORKFLOW_EXECUTION_STARTED', run.started, 1_000);
    const started = run.started;
    assert.equal(started.workflowType.name, 'w');
    assert.equal(Buffer.from(started.input.payloads[0].data).toString(), '"hello"');
    started.workflowType.name = 'changed';
    assert.equal(run.started.workflowType.name, 'w');
  });

  it('keeps memo and search attributes encoded: reads are fresh copies, writes replace them', () => {
    const run = newRun();
    assert.deepEqual(run.memo, {});
    const keyword = { metadata: { encoding: Buffer.from('json/plain'), type: Buffer.from('Keyword') }, data: Buffer.from('"u-1"') };
    run.searchAttributes = { UserId: keyword };
    run.memo = { note: { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('"n"') } };
    const read = run.searchAttributes;
    assert.equal(Buffer.from(read.UserId!.data).toString(), '"u-1"');
    assert.equal(Buffer.from(read.UserId!.metadata.type).toString(), 'Keyword');
    assert.equal(Buffer.from(run.memo.note!.data).toString(), '"n"');
    read.UserId!.data = Buffer.from('"other"');
    assert.equal(Buffer.from(run.searchAttributes.UserId!.data).toString(), '"u-1"');
    run.searchAttributes = {};
    assert.deepEqual(run.searchAttributes, {});
  });

  it('trims the history buffer on compact() without changing any event, and drops only empty collections', () => {
    const run = newRun();
    run.append('WORKFLOW_EXECUTION_STARTED', run.started, 1_000);
    for (let i = 0; i < 20; i++) run.append('TIMER_STARTED', { timerId: `t${i}`, startToFireTimeout: { seconds: 60 } }, 1_000 + i);
    const before = run.events;
    const size = run.historySizeBytes;
    const activities = run.activities; // touched, left empty
    const timers = run.timers;
    timers.set('t19', { startedEventId: 21, handle: { cancel: () => undefined } });
    run.compact();
    assert.deepEqual(run.events, before);
    assert.equal(run.historySizeBytes, size);
    assert.equal(run.eventCount, 21);
    // Bytes decoded before compact() stay intact (they are views of the old buffer, which is never overwritten).
    assert.equal(Buffer.from(before[0]!.workflowExecutionStartedEventAttributes.input.payloads[0].data).toString(), '"hello"');
    assert.equal(run.timers, timers);
    assert.notEqual(run.activities, activities);
    assert.equal(run.activities.size, 0);
    run.append('TIMER_FIRED', { timerId: 't19', startedEventId: 21 }, 2_000);
    assert.equal(run.lastEvent().timerFiredEventAttributes.timerId, 't19');
    assert.deepEqual(run.eventsBetween(0, 21), before);
  });

  it('holds under 6 KiB of heap per run waiting on a timer, shaped like a scheduled post (13.7 KiB before this change)', () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const { bytes, engine } = bytesPerWaitingRun(2000, gc);
    try {
      const runs = [...engine.ns('default').runs.values()];
      assert.equal(runs.filter((run) => run.open && !run.wft && run.timers.size === 1).length, 2001);
      assert.ok(bytes < 6 * 1024, `${bytes.toFixed(0)} bytes per waiting run`);
    } finally {
      engine.close();
    }
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
