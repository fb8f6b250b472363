import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { workflowBundle } from '../posts/harness';
import { silenceSdkLogs } from '../helpers/temporal';

/**
 * A run recorded by `publishThread` before the patch `thread-wake-cleared-before-read` replays on the current code
 * without a nondeterminism error. `before-wake-cleared-before-read.json` was recorded from the workflows of 75f3488
 * with the activities of `test/threads/workflow.test.ts`' signal test (the first read finds the thread waiting an
 * hour, a `threadChanged` signal arrives while it runs): the old code cleared the wake-up after the read, so it
 * slept the hour on a timer, then read again (`gone`). Read from the repository (mocha runs from its root).
 */
describe('publishThread replays a history recorded before its patch', function () {
  this.timeout(120_000);
  before(() => silenceSdkLogs());

  it('a run from before thread-wake-cleared-before-read: the signal during the read lost, the hour slept, as it was', async () => {
    const history = temporal.api.history.v1.History.fromObject(
      JSON.parse(readFileSync(path.resolve('test/threads/histories/before-wake-cleared-before-read.json'), 'utf8')),
    );
    const events = history.events ?? [];
    assert.ok(events.some((e) => e.workflowExecutionSignaledEventAttributes), 'a signal in the old run');
    assert.ok(events.some((e) => e.timerFiredEventAttributes), 'the old run slept on its timer');
    await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, 'before-wake-cleared-before-read');
  });
});
