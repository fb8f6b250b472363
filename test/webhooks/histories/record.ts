/**
 * Records the history of one dispatched webhook delivery run by an earlier version of `deliverWebhook`, its
 * activities scripted, for the replay test (`test/webhooks/replay.test.ts`). A replay reads only the activities'
 * recorded results, so scripted ones make the same history real ones would. Not a test: run once against that
 * version's `workflows/` folder, extracted inside the checkout (so the bundler finds `node_modules`):
 *
 *   mkdir -p .scratch/old && git archive <commit> workflows | tar -x -C .scratch/old
 *   node dist/test/webhooks/histories/record.js $PWD/.scratch/old/workflows test/webhooks/histories/<name>.json
 *
 * The run: restarted by the reconciler (`dispatched`, not `fresh`), its row saying attempt 1 is due in a minute; that
 * attempt and the next fail, the third is delivered. Three waits: the resumed one and each failure's retry.
 */
import { writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import type { createWebhookActivities } from '../../../activities/webhooks';
import { createTimeSkippingEnv } from '../../helpers/temporal';

type WebhookActivities = ReturnType<typeof createWebhookActivities>;

function scriptedActivities(): WebhookActivities {
  let attempts = 0;
  return {
    async resumeWebhookDelivery() {
      return { attempt: 1, waitMs: 60_000 };
    },
    async attemptWebhookDelivery() {
      attempts += 1;
      return attempts < 3 ? 'failed' : 'delivered';
    },
  };
}

async function record(workflowsDir: string, out: string): Promise<void> {
  const env = await createTimeSkippingEnv();
  try {
    const taskQueue = `old-${randomUUID()}`;
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: await bundleWorkflowCode({ workflowsPath: workflowsDir }),
      activities: scriptedActivities(),
    });
    const history = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start('deliverWebhook', {
        taskQueue,
        workflowId: `webhook-${randomUUID()}`,
        args: [{ eventId: 'evt_01JD00000000000000000000AB', endpointId: randomUUID(), dispatched: true, fresh: false }],
      });
      console.log(JSON.stringify(await handle.result()));
      return handle.fetchHistory();
    });
    writeFileSync(out, JSON.stringify(history, null, 1) + '\n');
  } finally {
    await env.teardown();
  }
}

const [workflowsDir, out] = process.argv.slice(2);
if (!workflowsDir || !out) throw new Error('usage: record.js <workflows dir> <out.json>');
record(workflowsDir, out).then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
