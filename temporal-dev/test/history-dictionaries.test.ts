// A workflow type's deflate dictionary given by the embedding application (issue 15): a waiting run's history
// deflates as small whatever history of its type the process deflated first, and histories deflated against an
// earlier dictionary still read back whole.
import assert from 'node:assert/strict';
import { Engine } from '../engine';
import { startWorkflow } from '../executions';
import { useHistoryDictionary } from '../history-storage';
import { encode } from '../proto';
import type { Run } from '../run';

const HISTORY_EVENT = 'temporal.api.history.v1.HistoryEvent';

describe('temporal-dev: history dictionaries given per workflow type', () => {
  it("deflates against its type's given dictionary whatever ran first, and reads back what was deflated before it", () => {
    const engine = new Engine({ timeSkipping: false, namespace: 'default' });
    try {
      const type = 'w-given-dictionary';
      const start = (workflowId: string) =>
        startWorkflow(engine, { namespace: 'default', workflowId, workflowType: { name: type }, taskQueue: { name: 'q' }, requestId: `r-${workflowId}` }).run;
      // A run like one that finished at once: activities, no timer (an immediate post, say).
      const finished = (workflowId: string) => {
        const run = start(workflowId);
        for (let i = 0; i < 6; i++) run.append('ACTIVITY_TASK_SCHEDULED', { activityId: `${i}`, activityType: { name: `send-${i}` }, taskQueue: { name: 'q' } }, 1_500 + i);
        run.wft = null;
        return run;
      };
      // A run like one that waits a week: an upsert, then its timer.
      const waiting = (workflowId: string) => {
        const run = start(workflowId);
        const groupId = { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from(`"group of ${workflowId}"`) };
        run.append('UPSERT_WORKFLOW_SEARCH_ATTRIBUTES', { searchAttributes: { indexedFields: { GroupId: groupId } } }, 1_999);
        run.append('TIMER_STARTED', { timerId: 'due', startToFireTimeout: { seconds: 7 * 86_400 } }, 2_000);
        run.setTimer({ timerId: 'due', startedEventId: run.eventCount, at: 7 * 86_400_000, cancel: () => undefined, pendingFire: undefined });
        run.wft = null;
        return run;
      };
      const deflatedSize = (run: Run) => {
        run.compact(0);
        assert.equal(run.storedAs, 'deflated');
        return (run as unknown as { history: string }).history.length;
      };

      // Left to itself the type's dictionary is the first history deflated: here a finished run's.
      const first = finished('finished-first');
      const firstEvents = first.events;
      deflatedSize(first);
      const beforeRun = waiting('waiting-before');
      const beforeEvents = beforeRun.events;
      const before = deflatedSize(beforeRun);

      // A waiting run's history given as the dictionary (what the application records: Herald's are real histories).
      const model = waiting('the-model');
      useHistoryDictionary(type, Buffer.concat(model.events.map((event) => encode(HISTORY_EVENT, event))));
      const afterRun = waiting('waiting-after');
      const afterEvents = afterRun.events;
      const after = deflatedSize(afterRun);
      assert.ok(after + 20 < before, `${before} -> ${after} bytes deflated`);

      // Each history reads back against the dictionary it was deflated with.
      assert.deepEqual(first.events, firstEvents);
      assert.deepEqual(beforeRun.events, beforeEvents);
      assert.deepEqual(afterRun.events, afterEvents);
      assert.equal(afterRun.lastEvent().timerStartedEventAttributes.timerId, 'due');

      // The same bytes given again (a test process starts many servers) name the same dictionary.
      useHistoryDictionary(type, Buffer.concat(model.events.map((event) => encode(HISTORY_EVENT, event))));
      const again = waiting('waiting-again');
      const againEvents = again.events;
      deflatedSize(again);
      assert.equal((again as unknown as { history: string }).history.charCodeAt(0), (afterRun as unknown as { history: string }).history.charCodeAt(0));
      assert.deepEqual(again.events, againEvents);
    } finally {
      engine.close();
    }
  });
});
