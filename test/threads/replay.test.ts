import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { workflowBundle } from '../posts/harness';
import { silenceSdkLogs } from '../helpers/temporal';

/**
 * Runs recorded by `publishThread` before its patches replay on the current code without a nondeterminism error.
 * Before `thread-wake-cleared-before-read`: `before-wake-cleared-before-read.json` was recorded from the workflows of 75f3488
 * with the activities of `test/threads/workflow.test.ts`' signal test (the first read finds the thread waiting an
 * hour, a `threadChanged` signal arrives while it runs): the old code cleared the wake-up after the read, so it
 * slept the hour on a timer, then read again (`gone`). Read from the repository (mocha runs from its root).
 */
describe('publishThread replays histories recorded before its patches', function () {
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

  it('a run from before thread-held-until-due, started with dueLeadMs and scheduledAt: its first read, its timer at the time, its parts one by one', async () => {
    // Recorded from the workflows of 7fcf328 (`test/threads/histories/record.ts`) with the input today's API gives,
    // as an old worker would have run it during a deploy: the current code must not take the hold for it.
    const history = temporal.api.history.v1.History.fromObject(JSON.parse(readFileSync(path.resolve('test/threads/histories/before-held-until-due.json'), 'utf8')));
    const scheduled = (history.events ?? []).map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter(Boolean);
    assert.deepEqual(scheduled, ['claimThread', 'claimThread', 'publishThreadPart', 'publishThreadPart', 'recordThreadPublished', 'cleanupThreadMedia']);
    await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, 'before-held-until-due');
  });

  it('a run from before thread-immediate-in-worker, started with immediate: its claim, its parts and its record through the task queue', async () => {
    // Recorded from the workflows of 5a5d382 (`test/threads/histories/record-immediate.ts`) with `immediate: true`,
    // which that code ignored: the current code must not take the local activity for it.
    const history = temporal.api.history.v1.History.fromObject(JSON.parse(readFileSync(path.resolve('test/threads/histories/before-immediate-in-worker.json'), 'utf8')));
    const scheduled = (history.events ?? []).map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter(Boolean);
    assert.deepEqual(scheduled, ['claimThread', 'publishThreadPart', 'publishThreadPart', 'recordThreadPublished']);
    await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, 'before-immediate-in-worker');
  });
});
