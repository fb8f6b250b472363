// A waiting run's state is kept compact (issue 15): history stored as encoded events and decoded when read, and
// workers that evict waiting workflows from a small cache replay them from that history correctly.
import assert from 'node:assert/strict';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Engine } from '../engine';
import { startWorkflow, terminateRun } from '../executions';
import { describeWorkflow } from '../inspection';
import { decode, encode, EventType, flatString, ownedCopy } from '../proto';
import { deflateHistory, inflateHistory } from '../history-storage';
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

  it('trims the history buffer on compact() without changing any event, and drops only empty collections', () => {
    const run = newRun();
    run.append('WORKFLOW_EXECUTION_STARTED', run.started, 1_000);
    for (let i = 0; i < 20; i++) run.append('TIMER_STARTED', { timerId: `t${i}`, startToFireTimeout: { seconds: 60 } }, 1_000 + i);
    const before = run.events;
    const size = run.historySizeBytes;
    const activities = run.activities; // touched, left empty
    const timer = { timerId: 't19', startedEventId: 21, at: 2_000, cancel: () => undefined, pendingFire: undefined };
    run.setTimer(timer);
    run.compact(1_500); // the timer is due in 0.5 s: kept as a string, not deflated
    assert.deepEqual(run.events, before);
    assert.equal(run.historySizeBytes, size);
    assert.equal(run.eventCount, 21);
    // Bytes decoded before compact() stay intact (they are views of the old buffer, which is never overwritten).
    assert.equal(Buffer.from(before[0]!.workflowExecutionStartedEventAttributes.input.payloads[0].data).toString(), '"hello"');
    assert.deepEqual(run.timers, [timer]);
    assert.notEqual(run.activities, activities);
    assert.equal(run.activities.size, 0);
    run.append('TIMER_FIRED', { timerId: 't19', startedEventId: 21 }, 2_000);
    assert.equal(run.lastEvent().timerFiredEventAttributes.timerId, 't19');
    assert.deepEqual(run.eventsBetween(0, 21), before);
  });

  it('finds, replaces and deletes timers by id whether it holds a few (a list) or thousands (a Map)', () => {
    const run = newRun();
    const timerOf = (i: number, at = i) => ({ timerId: `t${i}`, startedEventId: i + 1, at, cancel: () => undefined, pendingFire: undefined });
    for (let i = 0; i < 5_000; i++) run.setTimer(timerOf(i));
    run.setTimer(timerOf(7, 99)); // same id: replaced, not added
    assert.equal(run.timers.length, 5_000);
    assert.equal(run.timer('t7')!.at, 99);
    for (let i = 0; i < 5_000; i += 2) run.deleteTimer(`t${i}`);
    assert.equal(run.timer('t0'), undefined);
    assert.equal(run.timer('t4999')!.startedEventId, 5_000);
    assert.deepEqual(run.takeTimers().map((t) => t.timerId).slice(0, 3), ['t1', 't3', 't5']);
    assert.deepEqual(run.timers, []);
    run.setTimer(timerOf(1));
    run.deleteTimer('t1');
    assert.deepEqual(run.timers, []);
  });

  it('keeps a decoded request id as one flat string, not the tree of pieces protobufjs builds', () => {
    const type = 'temporal.api.workflowservice.v1.StartWorkflowExecutionRequest';
    const requestId = 'b87130e0-da37-4230-92bc-c450c6ea92a8';
    const bytes = encode(type, { requestId });
    assert.equal(flatString(decode(type, bytes).requestId), requestId);
    // Heap per kept string: a tree of pieces (~8 nodes of 32 bytes and their pieces) against 36 characters.
    v8.setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const perString = (make: () => string) => {
      const heap = () => {
        for (let i = 0; i < 3; i++) gc();
        return process.memoryUsage().heapUsed;
      };
      make(); // compiled before measuring
      const before = heap();
      const kept = Array.from({ length: 20_000 }, make);
      const grown = heap() - before;
      assert.equal(kept.length, 20_000);
      return grown / kept.length;
    };
    // The median of three: in a full run other suites' memory is let go of now and then (a worker shutting down),
    // and one such moment inside a measurement read -854 bytes a string once.
    const median = (measure: () => number) => [measure(), measure(), measure()].sort((a, b) => a - b)[1]!;
    const asDecoded = median(() => perString(() => decode(type, bytes).requestId));
    const flat = median(() => perString(() => flatString(decode(type, bytes).requestId)));
    assert.ok(flat * 2 < asDecoded, `${flat.toFixed(0)} bytes per flat string, ${asDecoded.toFixed(0)} per decoded one`);
  });

  it("reads memo and search attributes from the history: the start event's, then each upsert in order", () => {
    const engine = new Engine({ timeSkipping: false, namespace: 'default' });
    try {
      const payload = (value: unknown) => ({ metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from(JSON.stringify(value)) });
      const { run } = startWorkflow(engine, {
        namespace: 'default',
        workflowId: 'wf',
        workflowType: { name: 'w' },
        taskQueue: { name: 'q' },
        requestId: 'r-wf',
        memo: { fields: { note: payload('n') } },
        // An empty value is not one of the run's search attributes, though the start event keeps it.
        searchAttributes: { indexedFields: { UserId: payload('u-1'), PostId: payload(null) } },
      });
      assert.deepEqual(Object.keys(run.searchAttributes), ['UserId']);
      assert.deepEqual(Object.keys(run.started.searchAttributes.indexedFields).sort(), ['PostId', 'UserId']);
      assert.equal(Buffer.from(run.memo.note!.data).toString(), '"n"');

      run.append('UPSERT_WORKFLOW_SEARCH_ATTRIBUTES', { searchAttributes: { indexedFields: { GroupId: payload('g-1'), UserId: payload([]) } } }, 2_000);
      run.append('TIMER_STARTED', { timerId: 't', startToFireTimeout: { seconds: 60 } }, 2_000);
      run.append('WORKFLOW_PROPERTIES_MODIFIED', { upsertedMemo: { fields: { other: payload('o') } } }, 2_000);
      run.append('UPSERT_WORKFLOW_SEARCH_ATTRIBUTES', { searchAttributes: { indexedFields: { GroupId: payload('g-2') } } }, 2_000);
      const { memo, searchAttributes } = run.properties;
      assert.deepEqual(Object.keys(searchAttributes), ['GroupId']);
      assert.equal(Buffer.from(searchAttributes.GroupId!.data).toString(), '"g-2"');
      assert.deepEqual(Object.keys(memo).sort(), ['note', 'other']);
      // Reads are fresh copies: changing one never changes the run.
      searchAttributes.GroupId!.data = Buffer.from('"changed"');
      assert.equal(Buffer.from(run.searchAttributes.GroupId!.data).toString(), '"g-2"');
      // Nothing beside the history keeps them.
      assert.deepEqual(Object.keys(run).filter((key) => /memo|searchattributes/i.test(key)), []);
      assert.equal(run.requestId, 'r-wf');
    } finally {
      engine.close();
    }
  });

  it("keeps the history of a run that waits long deflated against its workflow type's dictionary, and reads it back whole", () => {
    const engine = new Engine({ timeSkipping: false, namespace: 'default' });
    try {
      const start = (workflowId: string) =>
        startWorkflow(engine, { namespace: 'default', workflowId, workflowType: { name: 'w-deflate' }, taskQueue: { name: 'q' }, requestId: `r-${workflowId}` }).run;
      const historyOf = (run: Run) => (run as unknown as { history: unknown }).history;
      const runs = [start('first'), start('second')];
      for (const run of runs) {
        const groupId = { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from(`"${run.workflowId}"`) };
        run.append('UPSERT_WORKFLOW_SEARCH_ATTRIBUTES', { searchAttributes: { indexedFields: { GroupId: groupId } } }, 1_999);
        for (let i = 0; i < 10; i++) run.append('TIMER_STARTED', { timerId: `t${i}`, startToFireTimeout: { seconds: 60 } }, 2_000 + i);
        run.wft = null; // as after a completed workflow task
      }
      const [first, second] = runs as [Run, Run];
      const before = second.events;
      const groupIdOf = (run: Run) => Buffer.from(run.searchAttributes.GroupId!.data).toString();
      const size = second.historySizeBytes;

      // A timer due within a minute keeps the history as it is (a string: it is read again soon).
      second.setTimer({ timerId: 'soon', startedEventId: 11, at: 30_000, cancel: () => undefined, pendingFire: undefined });
      second.compact(0);
      assert.equal(second.storedAs, 'string');

      second.setTimer({ timerId: 'soon', startedEventId: 11, at: 7 * 86_400_000, cancel: () => undefined, pendingFire: undefined });
      first.compact(0);
      second.compact(0);
      assert.equal(first.storedAs, 'deflated');
      assert.equal(second.storedAs, 'deflated');
      // The second run shares all but its ids with the first, its type's dictionary (and the deflated string is all
      // it keeps of its history: no list of event ends beside it).
      const deflated = historyOf(second) as string;
      assert.ok(deflated.length * 3 < size, `${deflated.length} bytes deflated of ${size}`);
      assert.equal(typeof (second as unknown as { eventEnds: unknown }).eventEnds, 'number');

      assert.deepEqual(second.events, before);
      assert.equal(second.historySizeBytes, size);
      assert.equal(second.lastEvent().timerStartedEventAttributes.timerId, 't9');
      assert.deepEqual(second.eventsBetween(3, 5).map((e) => e.eventId), [4, 5]);
      assert.equal(second.started.workflowType.name, 'w-deflate');
      // Which events changed the search attributes is read back from the deflated frames.
      assert.equal(groupIdOf(second), '"second"');
      // The next event inflates it again, and every event reads as before.
      second.append('TIMER_FIRED', { timerId: 't9', startedEventId: 12 }, 3_000);
      assert.equal(second.storedAs, 'buffer');
      assert.deepEqual(second.eventsBetween(0, before.length), before);
      assert.equal(second.lastEvent().timerFiredEventAttributes.timerId, 't9');
      assert.equal(groupIdOf(second), '"second"');

      // A history longer than the deflate window (8 KiB) reads back whole too.
      const long = start('long');
      for (let i = 0; i < 800; i++) long.append('TIMER_STARTED', { timerId: `long-${i}`, startToFireTimeout: { seconds: 60 } }, 2_000 + i);
      long.wft = null;
      const longEvents = long.events;
      long.compact(0);
      assert.ok(long.historySizeBytes > 16 * 1024);
      assert.equal(long.storedAs, 'deflated');
      assert.deepEqual(long.events, longEvents);

      // A closed run keeps its history deflated too.
      terminateRun(engine, second, 'test', undefined, 'test');
      second.compact(0);
      assert.equal(second.storedAs, 'deflated');
      assert.equal(second.lastEvent().eventId, second.eventCount);
      assert.equal(second.lastEvent().eventType, EventType.WORKFLOW_EXECUTION_TERMINATED);
    } finally {
      engine.close();
    }
  });

  it('describing a run or closing it adds no activity or child collections to it', () => {
    const engine = new Engine({ timeSkipping: false, namespace: 'default' });
    try {
      const { run } = startWorkflow(engine, { namespace: 'default', workflowId: 'wf', workflowType: { name: 'w' }, taskQueue: { name: 'q' }, requestId: 'r' });
      run.compact(engine.now());
      const collections = () => Object.keys((run as unknown as { collections?: object }).collections ?? {});
      const before = collections();
      const described = describeWorkflow(engine, { namespace: 'default', execution: { workflowId: 'wf' } });
      assert.deepEqual(described.pendingActivities, []);
      assert.deepEqual(described.pendingChildren, []);
      assert.deepEqual(collections(), before);
      terminateRun(engine, run, 'test', undefined, 'test');
      assert.equal(run.open, false);
      assert.equal(collections().includes('activities') || collections().includes('children'), false);
    } finally {
      engine.close();
    }
  });

  it('keeps a waiting run to 12 fields of its own: what runs of one kind share is one object, the rest is made only while set', () => {
    const { engine } = bytesPerWaitingRun(3, () => undefined);
    try {
      const [first, second] = [...engine.ns('default').runs.values()] as [Run, Run];
      const own = (run: Run) => run as unknown as { kind: object; more: unknown };
      // Each field of a run is 8 bytes of every waiting run: 28 of them until the evening of 2026-12-07.
      assert.ok(Object.keys(second).length <= 12, Object.keys(second).join(', '));
      assert.equal(own(second).more, undefined);
      assert.equal(own(first).kind, own(second).kind);
      assert.deepEqual(
        [second.namespace, second.workflowType, second.taskQueue, second.taskTimeoutMs, second.firstExecutionRunId, second.executionExpiry],
        ['default', 'publishPost', 'herald', 10_000, second.runId, 0],
      );
      assert.deepEqual([second.closeTime, second.wft, second.wftWanted, second.cancelRequested, second.parent, second.startDelayMs, second.forgotten], [0, null, false, false, undefined, 0, false]);
      assert.deepEqual(second.runTimeouts, []);

      // Set, the uncommon state reads back; a closed run keeps its close time.
      second.cancelRequested = true;
      assert.equal(second.cancelRequested, true);
      terminateRun(engine, second, 'test', undefined, 'test');
      const closedAt = second.closeTime;
      assert.ok(closedAt >= second.startTime);
      second.compact(engine.now());
      assert.equal(second.closeTime, closedAt);
      assert.equal(second.cancelRequested, true);

      // A run with a parent, a delay, an expiry and a first run of another id keeps them.
      const link = { namespace: 'default', workflowId: first.workflowId, runId: first.runId, initiatedEventId: 5 };
      const child = new Run('default', 'child', 'run-2', 'run-1', 'publishPost', 'herald', 1_000, {}, 10_000, 9_000, 'request-2');
      child.parent = link;
      child.startDelayMs = 250;
      child.append('WORKFLOW_EXECUTION_STARTED', {}, 1_000);
      child.compact(1_000);
      assert.deepEqual([child.parent, child.startDelayMs, child.executionExpiry, child.firstExecutionRunId, child.requestId], [link, 250, 9_000, 'run-1', 'request-2']);
      assert.equal(own(child).kind, own(first).kind);
    } finally {
      engine.close();
    }
  });

  it("deflates a waiting run's history against its own ids too: ~45 bytes less a scheduled post's, read back whole", () => {
    const { engine } = bytesPerWaitingRun(200, () => undefined);
    try {
      const runs = [...engine.ns('default').runs.values()].slice(1); // the first may be its type's dictionary
      // The type's dictionary is the first history of that type this process deflated (in the whole suite, some
      // other test's publishPost): so this compares each history with and without its own ids in the dictionary,
      // not with a size that depends on which history came first (~276 -> ~226 bytes when it is a scheduled post's).
      const own = (run: Run) => (run as unknown as { ownStrings: string }).ownStrings;
      const sizes = runs.map((run) => {
        const stored = (run as unknown as { history: string }).history;
        const { bytes, ends, marked } = inflateHistory(own(run), stored);
        return { withOwn: stored.length, without: deflateHistory(run.workflowType, '', bytes, ends, marked).length };
      });
      const saved = sizes.reduce((total, size) => total + size.without - size.withOwn, 0) / sizes.length;
      assert.ok(saved >= 30, `${saved.toFixed(1)} bytes saved a deflated history`);
      for (const run of runs.slice(0, 20)) {
        assert.equal(run.storedAs, 'deflated');
        const [started, , wftStarted] = run.events;
        assert.equal(started!.workflowExecutionStartedEventAttributes.originalExecutionRunId, run.runId);
        assert.equal(started!.workflowExecutionStartedEventAttributes.workflowId, run.workflowId);
        assert.equal(wftStarted!.workflowTaskStartedEventAttributes.requestId, run.requestId); // an eager start's
        assert.equal(run.lastEvent().timerStartedEventAttributes.timerId, '1');
      }
    } finally {
      engine.close();
    }
  });

  // The shape includes the SDK's upsert of TemporalChangeVersion (an event more): ~4.2 KiB a run with the run's own
  // search attributes record malloc'd, ~4.0 KiB with it kept as a string in V8's heap, ~2.9 KiB with that record read
  // from the history and the history (~1.1 KiB) deflated against its type's dictionary (~0.25 KiB), ~2.4 KiB with its
  // timer in a list instead of a Map and no empty arrays or collections object of its own; ~1.6 KiB with the timer its
  // own scheduler entry, the deflated history carrying its events' ends, and a cancelled workflow task timeout letting
  // go of the task at once (it stays in the scheduler's heap until due, and no time passes here).
  it('holds under 2 KiB of heap per run waiting on a timer, shaped like a scheduled post, described once (13.7 KiB, then 4.3, 2.65, 2.4, 1.6)', () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const { bytes, arrayBufferBytes, engine } = bytesPerWaitingRun(2000, gc);
    try {
      const runs = [...engine.ns('default').runs.values()];
      assert.equal(runs.filter((run) => run.open && !run.wft && run.timers.length === 1).length, 2001);
      assert.ok(bytes < 2 * 1024, `${bytes.toFixed(0)} bytes per waiting run`);
      // The history (most of a run's bytes) and the upserted search attributes are in V8's heap, not malloc'd
      // ArrayBuffer memory (~1.3 KiB a run before; the upserted record alone 472 bytes).
      assert.ok(arrayBufferBytes < 256, `${arrayBufferBytes.toFixed(0)} bytes of ArrayBuffers per waiting run`);
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
