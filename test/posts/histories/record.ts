/**
 * Records the history of one scheduled post run by an earlier version of the workflows, for the replay tests
 * (`test/posts/replay.test.ts`). Not a test: run once per patch, against that version's `workflows/` folder:
 *
 *   git archive <commit> workflows | tar -x -C /tmp/old
 *   node .build/out/test/posts/histories/record.js /tmp/old/workflows test/posts/histories/<name>.json
 *
 * The post is scheduled through the API (as a client would), its workflow replaced by the old code's on a task queue
 * of its own (the current activities serve it: the old workflows call activities that still exist), and run to
 * `published` with time skipping. The input carries `dueLeadMs`, so replaying it also passes the `prepare-before-due`
 * patch point.
 */
import { writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { createActivities } from '../../../activities';
import { createLogger } from '../../../src/logger';
import { postWorkflowId } from '../../../src/posts/workflow-client';
import { testConfig } from '../../helpers/api';
import { insertXAccount, testSealedBox } from '../fixtures';
import { startPostsHarness } from '../harness';

async function record(workflowsDir: string, out: string): Promise<void> {
  const h = await startPostsHarness();
  try {
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    await h.syncClock();
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: account.id, text: 'recorded for replay', schedule_at: new Date(h.now().getTime() + 30 * 60_000).toISOString() } });
    const postId: string = res.body.data.id;
    await h.env.client.workflow.getHandle(postWorkflowId(postId)).terminate('replaced by the old workflow code');
    const taskQueue = `old-${randomUUID()}`;
    const worker = await Worker.create({
      connection: h.env.nativeConnection,
      taskQueue,
      workflowBundle: await bundleWorkflowCode({ workflowsPath: workflowsDir }),
      activities: createActivities({ config: testConfig(), db: h.db, logger: createLogger('silent'), posts: { adapters: h.standIns.adapters, sealedBox: testSealedBox, taskQueue } }),
    });
    const history = await worker.runUntil(async () => {
      const handle = await h.env.client.workflow.start('publishPost', {
        taskQueue,
        workflowId: postWorkflowId(postId),
        args: [{ postId, scheduledRetryDelaysMs: [60_000], immediateRetryDelaysMs: [], dueLeadMs: 250 }],
      });
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
