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

  // Recorded with `test/threads/histories/record-scripted.ts` (scripted activities: a replay reads only their results).
  const replayed = async (name: string) => {
    const history = temporal.api.history.v1.History.fromObject(JSON.parse(readFileSync(path.resolve(`test/threads/histories/${name}.json`), 'utf8')));
    const events = history.events ?? [];
    const scheduled = events.map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter(Boolean);
    const patches = events.flatMap((e) => e.markerRecordedEventAttributes?.details?.['patch-data']?.payloads ?? []).map((p) => (JSON.parse(Buffer.from(p.data!).toString('utf8')) as { id: string }).id);
    return { history, scheduled, patches, replay: async () => Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, name) };
  };

  it('a run from before thread-rollback-looks-for-unconfirmed: part 3 refused, only the confirmed parts deleted, no look', async () => {
    // Workflows of 2823150, scenario `refused`: today's rollback asks the patch where it would look for part 3.
    const { scheduled, patches, replay } = await replayed('before-rollback-looks-for-unconfirmed');
    assert.deepEqual(scheduled, ['claimThread', 'publishThreadPart', 'publishThreadPart', 'publishThreadPart', 'removeThreadPart', 'removeThreadPart', 'requeueThread', 'claimThread']);
    assert.ok(!patches.includes('thread-rollback-looks-for-unconfirmed'));
    await replay();
  });

  it('a run from before thread-unknown-part-looked-for: part 2 unanswered, not called again, the thread rolled back and failed', async () => {
    // Workflows of e58cb01, scenario `lost-call`: today's parts loop asks the patch where it would call part 2 again,
    // and its end where the look's settled answer would make the failure a retry.
    const { scheduled, patches, replay } = await replayed('before-unknown-part-looked-for');
    assert.deepEqual(scheduled, ['claimThread', 'publishThreadPart', 'publishThreadPart', 'lookForUnconfirmedPart', 'removeThreadPart', 'failThread', 'cleanupThreadMedia']);
    assert.ok(patches.includes('thread-rollback-looks-for-unconfirmed') && !patches.includes('thread-unknown-part-looked-for'));
    await replay();
  });

  it('a run from before thread-first-part-look-awaits-credential: part 1 met a renewal, looked for by the rollback, then the wait', async () => {
    // Workflows of 76b6a67, scenario `renewal`: today's code asks the patch where it would put the look off.
    const { scheduled, patches, replay } = await replayed('before-first-part-look-awaits-credential');
    assert.deepEqual(scheduled, ['claimThread', 'publishThreadPart', 'lookForUnconfirmedPart', 'awaitThreadCredential', 'claimThread']);
    assert.ok(!patches.includes('thread-first-part-look-awaits-credential'));
    await replay();
  });

  it('a run from before thread-immediate-wait-not-held: an immediate thread told to wait, held a lead ahead of the wait\'s end, as it ran', async () => {
    // Workflows of 6116d69, scenario `immediate-wait`: today's code asks the patch where it would not hold the wait.
    const { scheduled, patches, replay } = await replayed('before-immediate-wait-not-held');
    assert.deepEqual(scheduled, ['publishThreadWhenDue']);
    assert.ok(!patches.includes('thread-immediate-wait-not-held'));
    await replay();
  });

  it('a run from before a lost hold\'s rows were read with its loss\'s time: part 2 called at once, as it ran (no patch: only an input changed)', async () => {
    // Workflows of 10b0c91, scenario `lost-hold`: today's code reads the rows of a lost hold with `lostAt`, the same
    // command; the recorded result (the parts as stored) replays, whatever today's activity would answer.
    const { scheduled, replay } = await replayed('before-lost-hold-read-with-its-time');
    assert.deepEqual(scheduled, ['publishThreadWhenDue', 'heldThreadState', 'publishThreadPart', 'publishThreadPart', 'recordThreadPublished', 'cleanupThreadMedia']);
    await replay();
  });
});
