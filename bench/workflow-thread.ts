// What the Temporal SDK's workflow sandbox costs per workflow, before Herald's code runs (issue 15, the floor). In this
// process, without a worker or a server: Herald's workflow bundle in the SDK's reusable V8 context, as the worker's
// workflow thread runs it (`src/temporal/workflow-thread.ts`, with the lazy promise stacks), timing
//   1. a call into one workflow's scope, the same workflow each time and then two in turn: the difference is the SDK's
//      swap of the context's globals between workflows (`__TEMPORAL_CALL_INTO_SCOPE`);
//   2. a workflow created and disposed (its modules evaluated in its own module cache, its runtime set up);
//   3. an immediate `publishPost` created, activated until it schedules its local activity, and disposed: the
//      workflow thread's share of one immediate publish, less the activity's resolution and the thread hops.
// Usage: node <out>/bench/workflow-thread.js [count=2000]. Prints JSON; compare within one run.
import path from 'node:path';
import vm from 'node:vm';
import { defaultPayloadConverter } from '@temporalio/common';
import { msNumberToTs } from '@temporalio/common/lib/time';
import { coresdk } from '@temporalio/proto';
import { globalHandlers } from '@temporalio/worker/lib/workflow/vm-shared';
import { ReusableVMWorkflowCreator } from '@temporalio/worker/lib/workflow/reusable-vm';
import type { WorkflowCreateOptions } from '@temporalio/worker/lib/workflow/interface';
import type { PublishPostInput } from '../workflows/publish-post';
import { installLazyPromiseStacks } from '../src/temporal/lazy-promise-stacks';
import { bundleWorkflowsInChild } from '../src/temporal/workflow-bundle';

const count = Number(process.argv[2] ?? 2000);
const emptySourceMap = { version: 3, sources: [], names: [], mappings: '' };

function optionsOf(i: number): WorkflowCreateOptions {
  const now = Date.now();
  return {
    info: {
      workflowId: `post-${i}`,
      runId: `run-${i}`,
      workflowType: 'publishPost',
      searchAttributes: {},
      taskQueue: 'herald',
      namespace: 'default',
      firstExecutionRunId: `run-${i}`,
      originalExecutionRunId: `run-${i}`,
      startTime: new Date(now),
      runStartTime: new Date(now),
      taskTimeoutMs: 10_000,
      attempt: 1,
      historyLength: 3,
      historySize: 0,
      continueAsNewSuggested: false,
      unsafe: { now: Date.now, isReplaying: false },
    } as unknown as WorkflowCreateOptions['info'],
    randomnessSeed: [0, 0, 0, 0, (i >>> 24) & 255, (i >>> 16) & 255, (i >>> 8) & 255, i & 255],
    now,
    showStackTraceSources: false,
  };
}

function firstActivation(i: number): coresdk.workflow_activation.WorkflowActivation {
  const input: PublishPostInput = { postId: `post-${i}`, immediate: true, scheduledRetryDelaysMs: [60_000, 300_000, 900_000], immediateRetryDelaysMs: [1_000, 2_000] };
  const now = msNumberToTs(Date.now());
  return coresdk.workflow_activation.WorkflowActivation.create({
    runId: `run-${i}`,
    timestamp: now,
    isReplaying: false,
    historyLength: 3,
    jobs: [
      {
        initializeWorkflow: {
          workflowType: 'publishPost',
          workflowId: `post-${i}`,
          arguments: [defaultPayloadConverter.toPayload(input)],
          randomnessSeed: msNumberToTs(i * 1000).seconds, // a Long of i (the SDK's own Long class)
          firstExecutionRunId: `run-${i}`,
          attempt: 1,
          startTime: now,
        },
      },
    ],
  });
}

async function timed(label: string, times: number, step: (i: number) => Promise<unknown>): Promise<[string, number]> {
  const started = process.hrtime.bigint();
  for (let i = 0; i < times; i++) await step(i);
  return [label, Number((Number(process.hrtime.bigint() - started) / 1e3 / times).toFixed(1))];
}

async function main(): Promise<void> {
  const { code } = await bundleWorkflowsInChild(path.resolve(__dirname, '../workflows/index.js'));
  installLazyPromiseStacks(globalHandlers);
  const creator = await ReusableVMWorkflowCreator.create({ code, filename: 'workflow-bundle.js', sourceMap: emptySourceMap } as never, undefined as never, new Set(['publishToPlatform']), undefined);
  // `tryUnblockConditions` is the cheapest call the SDK makes into a workflow's scope (none of these has a condition).
  const [a, b] = [await creator.createWorkflow(optionsOf(-1)), await creator.createWorkflow(optionsOf(-2))].map(
    (workflow) => (workflow as unknown as { workflowModule: { tryUnblockConditions(): number } }).workflowModule,
  ) as [{ tryUnblockConditions(): number }, { tryUnblockConditions(): number }];
  const figures: Array<[string, number]> = [];
  for (const round of [1, 2]) {
    const suffix = round === 1 ? ' (warm-up)' : '';
    figures.push(await timed(`call into one workflow's scope, us${suffix}`, count * 5, async () => a.tryUnblockConditions()));
    figures.push(await timed(`call into two workflows' scopes in turn, us${suffix}`, count * 5, async (i) => (i % 2 ? a : b).tryUnblockConditions()));
    figures.push(
      await timed(`create and dispose, us${suffix}`, count, async (i) => {
        const workflow = await creator.createWorkflow(optionsOf(round * 1e6 + i));
        await workflow.dispose();
      }),
    );
    let commands = 0;
    figures.push(
      await timed(`create, first activation of an immediate publishPost, dispose, us${suffix}`, count, async (i) => {
        const workflow = await creator.createWorkflow(optionsOf(round * 1e6 + count + i));
        const completion = await workflow.activate(firstActivation(round * 1e6 + count + i));
        commands = completion.successful?.commands?.length ?? -1;
        await workflow.getAndResetSinkCalls();
        await workflow.dispose();
      }),
    );
    if (commands < 1) throw new Error(`the first activation did not end with a command (${commands})`);
  }
  const figure = (label: string) => figures.find(([l]) => l === label)![1];
  figures.push(["the globals' swap, us a switch", Number((figure("call into two workflows' scopes in turn, us") - figure("call into one workflow's scope, us")).toFixed(1))]);
  const globals = vm.runInContext('Reflect.ownKeys(globalThis).length', (creator as unknown as { context: vm.Context }).context) as number;
  process.stdout.write(`${JSON.stringify({ count, context_globals: globals, figures: Object.fromEntries(figures) }, null, 2)}\n`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
