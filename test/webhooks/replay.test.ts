import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { workflowBundle } from '../posts/harness';
import { silenceSdkLogs } from '../helpers/temporal';

/**
 * `deliverWebhook` waits on `condition(asked, ms)` since a user's ask ends a retry wait (`attemptNow`); it slept. With
 * no ask the two start the same timer and nothing else, so a run recorded before replays without a patch.
 * `before-attempt-now.json` was recorded from the workflows of 56c25fd with `test/webhooks/histories/record.ts`.
 */
describe('deliverWebhook replays histories recorded before attemptNow', function () {
  this.timeout(120_000);
  before(() => silenceSdkLogs());

  it('a resumed delivery: its resumed wait, two failed attempts each followed by its retry wait, then delivered', async () => {
    const history = temporal.api.history.v1.History.fromObject(JSON.parse(readFileSync(path.resolve('test/webhooks/histories/before-attempt-now.json'), 'utf8')));
    const events = history.events ?? [];
    const scheduled = events.map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter(Boolean);
    assert.deepEqual(scheduled, ['resumeWebhookDelivery', 'attemptWebhookDelivery', 'attemptWebhookDelivery', 'attemptWebhookDelivery']);
    assert.equal(events.filter((e) => e.timerFiredEventAttributes).length, 3, 'the resumed wait and two retry waits, each a timer');
    await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, 'before-attempt-now');
  });
});
