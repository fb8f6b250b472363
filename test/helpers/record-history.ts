/**
 * The recorders of the replay tests' histories (`test/posts/histories/record.ts`, `test/threads/histories/record.ts`):
 * a run of an earlier version of the workflows, written as JSON. Not a test: run once per patch, against that
 * version's `workflows/` folder, extracted inside the checkout (so the bundler finds `node_modules`):
 *
 *   mkdir -p scratch/old && git archive <commit> workflows | tar -x -C scratch/old
 *   node dist/test/<area>/histories/record.js $PWD/scratch/old/workflows test/<area>/histories/<name>.json
 *
 * `schedule` creates the post or thread through the API (as a client would), or writes its rows itself where the API
 * would run it at once, and names its workflow and the input to start it with. That workflow is replaced by the old code's, on a task queue of its own (the current activities
 * serve it: the old workflows call activities that still exist), and run to its end with time skipping.
 */
import { writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError } from '@temporalio/client';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { createLogger } from '../../src/logger';
import type { PlanName } from '../../src/plans';
import { testSealedBox } from '../posts/fixtures';
import { startPostsHarness, type PostsHarness } from '../posts/harness';
import { testConfig } from './api';

interface RecordedRun {
  workflowId: string;
  workflowType: string;
  args: unknown[];
}

export function recordOldRun(schedule: (h: PostsHarness) => Promise<RecordedRun>, options: { plan?: PlanName } = {}): void {
  const [workflowsDir, out] = process.argv.slice(2);
  if (!workflowsDir || !out) throw new Error('usage: record.js <workflows dir> <out.json>');
  record(workflowsDir, out, schedule, options).then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}

async function record(workflowsDir: string, out: string, schedule: (h: PostsHarness) => Promise<RecordedRun>, options: { plan?: PlanName }): Promise<void> {
  const h = await startPostsHarness(options);
  try {
    const run = await schedule(h);
    // Gone already when `schedule` wrote the rows itself (no workflow started for them).
    await h.env.client.workflow
      .getHandle(run.workflowId)
      .terminate('replaced by the old workflow code')
      .catch((err: unknown) => {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
      });
    const taskQueue = `old-${randomUUID()}`;
    const worker = await Worker.create({
      connection: h.env.nativeConnection,
      taskQueue,
      workflowBundle: await bundleWorkflowCode({ workflowsPath: workflowsDir }),
      activities: createActivities({ config: testConfig(), db: h.db, logger: createLogger('silent'), posts: { adapters: h.standIns.adapters, sealedBox: testSealedBox, taskQueue } }),
    });
    const history = await worker.runUntil(async () => {
      const handle = await h.env.client.workflow.start(run.workflowType, { taskQueue, workflowId: run.workflowId, args: run.args });
      console.log(JSON.stringify(await handle.result()));
      return handle.fetchHistory();
    });
    writeFileSync(out, JSON.stringify(history, null, 1) + '\n');
  } finally {
    await h.stop();
  }
}
