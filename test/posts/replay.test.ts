import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { silenceSdkLogs } from '../helpers/temporal';
import { workflowBundle } from './harness';

/**
 * Runs recorded by earlier versions of `publishPost` replay on the current code without a nondeterminism error: the
 * patches (`claim-and-publish`, `prepare-before-due`, `retry-state-in-row`, `held-step-keeps-wake`) send them down the path they took. Each
 * history is a scheduled post waiting on its timer, then published, recorded by `test/posts/histories/record.ts`
 * (`record-retry.ts`: its first attempt refused, its retry published) from the workflows of:
 *   before-claim-and-publish.json    86b13c9^ (a separate claimPost, then publishToPlatform, at the instant)
 *   before-prepare-before-due.json   6090938 (claimAndPublish at the instant, woken by its timer at scheduled_at)
 *   before-retry-state-in-row.json   fbdb91f (held to the instant, refused; the retry's wait and count its own)
 *   before-held-step-keeps-wake.json 7deb6ae (held; moved twice, the second move signalled during the look at the
 *                                    first: recorded by `scheduled-held-reschedule.test.ts`'s second-move test run on
 *                                    that commit's `workflows/publish-post.ts`, with the history written after settle)
 * Every input carries `dueLeadMs`, as a run started by the current API and run by an older worker would. Read from
 * the repository (mocha runs from its root), not the build output.
 */
describe('publishPost replays histories recorded before its patches (issue 15)', function () {
  this.timeout(120_000);
  before(() => silenceSdkLogs());

  // `fetchHistory()`'s JSON (enum names, base64 bytes) is what the proto's `fromObject` reads.
  const historyOf = (name: string) => temporal.api.history.v1.History.fromObject(JSON.parse(readFileSync(path.resolve('test/posts/histories', name), 'utf8')));
  const activityTypesOf = (history: temporal.api.history.v1.IHistory) =>
    (history.events ?? []).flatMap((e) => {
      const details = e.markerRecordedEventAttributes?.details?.data?.payloads?.[0]?.data;
      return details ? [(JSON.parse(Buffer.from(details).toString('utf8')) as { activity_type: string }).activity_type] : [];
    });

  it('a run from before claim-and-publish: its separate claim and attempt replay as they were', async () => {
    const history = historyOf('before-claim-and-publish.json');
    assert.deepEqual(activityTypesOf(history), ['claimPost', 'claimPost', 'publishToPlatform']);
    await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, 'before-claim-and-publish');
  });

  it('a run from before prepare-before-due: woken by its timer at scheduled_at, claimAndPublish then, no hold', async () => {
    const history = historyOf('before-prepare-before-due.json');
    assert.deepEqual(activityTypesOf(history), ['claimAndPublish', 'claimAndPublish']);
    assert.ok(!(history.events ?? []).some((e) => e.activityTaskScheduledEventAttributes), 'no regular activity in the old run');
    await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, 'before-prepare-before-due');
  });

  it('a run from before held-step-keeps-wake: a move signalled during the held look, the flag cleared, it sleeps to the first move', async () => {
    const history = historyOf('before-held-step-keeps-wake.json');
    assert.deepEqual(activityTypesOf(history), ['heldPostState', 'claimPost', 'publishToPlatform']);
    await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, 'before-held-step-keeps-wake');
  });

  it('a run from before retry-state-in-row: refused at the instant, it waits and counts by itself, and its retry publishes', async () => {
    const history = historyOf('before-retry-state-in-row.json');
    assert.deepEqual(activityTypesOf(history), ['claimAndPublish', 'recordFailedAttempt', 'claimAndPublish', 'claimAndPublish']);
    await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, 'before-retry-state-in-row');
  });
});
