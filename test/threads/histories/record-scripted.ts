/**
 * Records the history of one scheduled thread run by an earlier version of the workflows, its activities scripted as
 * `test/threads/workflow.test.ts` scripts them (a refused part, a lost part call, a credential being renewed: outcomes
 * the stand-ins give only with a renewal or a crash staged), for the replay tests (`test/threads/replay.test.ts`).
 * A replay reads only the activities' recorded results, so scripted ones make the same history real ones would. Not
 * a test: run once per patch against that version's `workflows/` folder, extracted inside the checkout (so the
 * bundler finds `node_modules`):
 *
 *   mkdir -p .scratch/old && git archive <commit> workflows | tar -x -C .scratch/old
 *   node dist/test/threads/histories/record-scripted.js $PWD/.scratch/old/workflows <scenario> test/threads/histories/<name>.json
 *
 * Scenarios (three parts on Instagram, deletable, scheduled, claimed once, then `gone`):
 *   refused       part 3 refused: parts 2 and 1 deleted, the thread requeued for its retry, its next claim gone
 *   lost-call     part 2's activity throws (its outcome unknown); the rollback's look finds it absent; part 1
 *                 deleted; the thread failed (an unknown outcome is never retried)
 *   renewal       part 1 meets its account's credential being renewed; the rollback's look finds it absent; the
 *                 thread waits for the renewal (`awaitThreadCredential`), and its next claim finds it gone
 *   lost-hold     held a minute ahead of its time (`dueLeadMs`, `scheduledAt`), its hold lost after part 1 (the
 *                 activity throws); the rows read (`heldThreadState`) say part 1 live, part 2 unknown; parts 2 and 3
 *                 sent, the thread recorded
 *   immediate-wait  immediate (`immediate`, `dueLeadMs`): its one activity (`publishThreadNow`) could not read the
 *                 rows; the claim after it answers a wait of 10 minutes for a call that may still land (an earlier
 *                 run's); the code before `thread-immediate-wait-not-held` holds it a lead ahead, and the hold reports
 *                 every part sent and recorded
 */
import { writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import type { PartAttempt, PartRemoval, ThreadActivities, ThreadClaim, ThreadStep, UnconfirmedPart } from '../../../activities/threads';
import type { HeldThreadActivities } from '../../../activities/threads-held';
import { createTimeSkippingEnv } from '../../helpers/temporal';

type Scenario = 'refused' | 'lost-call' | 'renewal' | 'lost-hold' | 'immediate-wait';

const claim: Extract<ThreadClaim, { kind: 'publish' }> = {
  kind: 'publish',
  scheduled: true,
  platform: 'instagram',
  platformName: 'Instagram',
  parts: [1, 2, 3].map((n) => ({ postId: `p${n}`, threadOrder: n })),
  firstCommentPostId: null,
  rollbackSupported: true,
};

function scriptedActivities(scenario: Scenario): Partial<ThreadActivities & HeldThreadActivities> {
  let claimed = false;
  return {
    async claimThread(input): Promise<ThreadClaim> {
      if (claimed) return { kind: 'gone' };
      claimed = true;
      const until = input.now + 10 * 60_000;
      return scenario === 'immediate-wait' ? { kind: 'wait', until, retry: { failures: 0, notBefore: until } } : claim;
    },
    async publishThreadNow(): Promise<ThreadStep> {
      return { claim: null };
    },
    async publishThreadWhenDue(): Promise<ThreadStep> {
      if (scenario !== 'immediate-wait') throw new Error('worker lost');
      const sent = [1, 2, 3].map((n) => ({ ok: true as const, platformPostId: `ig-${n}`, url: `https://www.instagram.com/p/ig${n}/` }));
      return { claim: { ...claim, scheduled: false }, sent, recorded: true };
    },
    async heldThreadState(): Promise<ThreadStep> {
      return { claim: { ...claim, parts: claim.parts }, sent: [{ ok: true, platformPostId: 'ig-1', url: 'https://www.instagram.com/p/ig1/' }, null] };
    },
    async publishThreadPart(input): Promise<PartAttempt> {
      const n = Number(input.postId.slice(1));
      if (scenario === 'refused' && n === 3) return { ok: false, kind: 'permanent', message: 'Instagram refused the post.', retryAfterSeconds: null };
      if (scenario === 'lost-call' && n === 2) throw new Error('worker lost');
      if (scenario === 'renewal' && n === 1) return { ok: false, kind: 'retryable', message: 'Instagram access ended; Herald is renewing it.', retryAfterSeconds: null, awaitingCredential: true };
      return { ok: true, platformPostId: `ig-${n}`, url: `https://www.instagram.com/p/ig${n}/` };
    },
    async removeThreadPart(): Promise<PartRemoval> {
      return 'removed';
    },
    async lookForUnconfirmedPart(): Promise<UnconfirmedPart> {
      return { kind: 'absent' };
    },
    async awaitThreadCredential() {
      return { waiting: true };
    },
    async requeueThread() {},
    async failThread() {},
    async cleanupThreadMedia() {
      return 0;
    },
    async recordThreadPublished() {},
  };
}

async function record(workflowsDir: string, scenario: Scenario, out: string): Promise<void> {
  const env = await createTimeSkippingEnv();
  try {
    const taskQueue = `old-${randomUUID()}`;
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: await bundleWorkflowCode({ workflowsPath: workflowsDir }),
      activities: scriptedActivities(scenario),
    });
    const history = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start('publishThread', {
        taskQueue,
        workflowId: `thread-${randomUUID()}`,
        args: [{ threadId: 't', scheduledRetryDelaysMs: [60_000], partRetryDelaysMs: [], ...(scenario === 'lost-hold' ? { dueLeadMs: 60_000, scheduledAt: (await env.currentTimeMs()) + 3_600_000 } : {}),
          ...(scenario === 'immediate-wait' ? { dueLeadMs: 60_000, immediate: true } : {}),
        }],
      });
      console.log(JSON.stringify(await handle.result()));
      return handle.fetchHistory();
    });
    writeFileSync(out, JSON.stringify(history, null, 1) + '\n');
  } finally {
    await env.teardown();
  }
}

const [workflowsDir, scenario, out] = process.argv.slice(2);
if (!workflowsDir || !out || !['refused', 'lost-call', 'renewal', 'lost-hold', 'immediate-wait'].includes(scenario ?? '')) throw new Error('usage: record-scripted.js <workflows dir> refused|lost-call|renewal|lost-hold|immediate-wait <out.json>');
record(workflowsDir, scenario as Scenario, out).then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
