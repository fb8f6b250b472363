/**
 * Records the history of one scheduled thread run by an earlier version of the workflows, for the replay tests
 * (`test/threads/replay.test.ts`). Not a test: run once per patch, against that version's `workflows/` folder:
 *
 *   mkdir -p scratch/old && git archive <commit> workflows | tar -x -C scratch/old
 *   node dist/test/threads/histories/record.js $PWD/scratch/old/workflows test/threads/histories/<name>.json
 *
 * (an absolute path inside the checkout, so the bundler finds `node_modules`).
 *
 * The thread is scheduled through the API (as a client would), its workflow replaced by the old code's on a task
 * queue of its own (the current activities serve it: the old workflows call activities that still exist), started
 * with the input the current API gives (`dueLeadMs`, `scheduledAt`: what an old worker would meet during a rolling
 * deploy), and run to `published` with time skipping.
 */
import { writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { createActivities } from '../../../activities';
import { createLogger } from '../../../src/logger';
import { threadWorkflowId } from '../../../src/threads/workflow-client';
import type { PublishThreadInput } from '../../../workflows/publish-thread';
import { testConfig } from '../../helpers/api';
import { insertXAccount, testSealedBox } from '../../posts/fixtures';
import { startPostsHarness } from '../../posts/harness';

async function record(workflowsDir: string, out: string): Promise<void> {
  const h = await startPostsHarness({ plan: 'pro' });
  try {
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    await h.syncClock();
    const at = new Date(h.now().getTime() + 30 * 60_000);
    const res = await h.api.request('POST', '/api/v1/threads', { body: { account_id: account.id, posts: [{ text: 'recorded one' }, { text: 'recorded two' }], schedule_at: at.toISOString() } });
    const threadId: string = res.body.data.thread_id;
    await h.env.client.workflow.getHandle(threadWorkflowId(threadId)).terminate('replaced by the old workflow code');
    const taskQueue = `old-${randomUUID()}`;
    const worker = await Worker.create({
      connection: h.env.nativeConnection,
      taskQueue,
      workflowBundle: await bundleWorkflowCode({ workflowsPath: workflowsDir }),
      activities: createActivities({ config: testConfig(), db: h.db, logger: createLogger('silent'), posts: { adapters: h.standIns.adapters, sealedBox: testSealedBox, taskQueue } }),
    });
    const input: PublishThreadInput = { threadId, scheduledRetryDelaysMs: [60_000], partRetryDelaysMs: [], dueLeadMs: 250, scheduledAt: at.getTime() };
    const history = await worker.runUntil(async () => {
      const handle = await h.env.client.workflow.start('publishThread', { taskQueue, workflowId: threadWorkflowId(threadId), args: [input] });
      console.log(JSON.stringify(await handle.result()));
      return handle.fetchHistory();
    });
    writeFileSync(out, JSON.stringify(history, null, 1) + '\n');
  } finally {
    await h.stop();
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
