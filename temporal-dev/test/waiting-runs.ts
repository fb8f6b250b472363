// Waiting runs shaped like Herald's scheduled posts, made through temporal-dev's own handlers without a worker or
// gRPC (issue 15): shared by memory.test.ts and bench/temporal-dev-waiting.ts, which measure what each one holds.
// A start like publishPost's (JSON input, the search attributes Herald sets, eager start), decoded from its encoded
// bytes as the gRPC server decodes it (strings as protobufjs makes them), its first workflow task completed with the
// SDK's metadata, the upsert of TemporalChangeVersion its patches make, and one StartTimer of 7 days, as a scheduled
// post's first task does; then described once, as Herald's reconciler describes every recently created post's
// workflow each minute.
import { randomUUID } from 'node:crypto';
import { Engine } from '../engine';
import { startWorkflow } from '../executions';
import { describeWorkflow } from '../inspection';
import { CommandType, decode, encode, ownedCopy } from '../proto';
import { completeWorkflowTask } from '../workflow-tasks';

const json = (value: unknown) => ({ metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from(JSON.stringify(value)) });
const keyword = (value: string | string[], type: 'Keyword' | 'KeywordList') => ({
  metadata: { encoding: Buffer.from('json/plain'), type: Buffer.from(type) },
  data: Buffer.from(JSON.stringify(value)),
});

function startRequest(immediate = false): Record<string, unknown> {
  const postId = randomUUID();
  return {
    namespace: 'default',
    workflowId: `post-${postId}`,
    workflowType: { name: 'publishPost' },
    taskQueue: { name: 'herald', kind: 1 },
    input: { payloads: [json({ postId, userId: randomUUID(), groupId: randomUUID(), attempt: 1, ...(immediate ? { immediate } : {}) })] },
    identity: `12345@herald-host`,
    requestId: randomUUID(),
    workflowIdReusePolicy: 2,
    searchAttributes: {
      indexedFields: {
        PostId: keyword([postId], 'KeywordList'),
        GroupId: keyword(randomUUID(), 'Keyword'),
        UserId: keyword(randomUUID(), 'Keyword'),
        Platform: keyword(['x'], 'KeywordList'),
      },
    },
    header: { fields: {} },
    requestEagerExecution: true,
  };
}

const START_REQUEST = 'temporal.api.workflowservice.v1.StartWorkflowExecutionRequest';

/**
 * A run like an immediate post's that finished at once (its first task completes it), closed and so deflated: made
 * first, it is what its type's dictionary is when none is given (`history-storage.ts`).
 */
export function finishedRun(engine: Engine): void {
  const request = decode(START_REQUEST, ownedCopy(encode(START_REQUEST, startRequest(true))));
  const { eagerWorkflowTask } = startWorkflow(engine, request, {}, { allowEager: true });
  if (!eagerWorkflowTask) throw new Error('no eager workflow task');
  completeWorkflowTask(engine, {
    taskToken: eagerWorkflowTask.taskToken,
    identity: '12345@herald-host',
    commands: [{ commandType: CommandType.COMPLETE_WORKFLOW_EXECUTION, completeWorkflowExecutionCommandAttributes: { result: { payloads: [json({ status: 'published', platformPostId: '1234567890' })] } } }],
    sdkMetadata: { langUsedFlags: [1, 2, 3], sdkName: 'temporal-typescript', sdkVersion: '1.24.0' },
    meteringMetadata: {},
  });
}

export function waitingRun(engine: Engine): void {
  const request = decode(START_REQUEST, ownedCopy(encode(START_REQUEST, startRequest())));
  const { run, eagerWorkflowTask } = startWorkflow(engine, request, {}, { allowEager: true });
  if (!eagerWorkflowTask) throw new Error('no eager workflow task');
  completeWorkflowTask(engine, {
    taskToken: eagerWorkflowTask.taskToken,
    identity: '12345@herald-host',
    commands: [
      // The SDK's patch markers come with an upsert of TemporalChangeVersion (sdk-core's patch state machine), which
      // replaces the start event's search attributes with a record of the run's own.
      {
        commandType: CommandType.UPSERT_WORKFLOW_SEARCH_ATTRIBUTES,
        upsertWorkflowSearchAttributesCommandAttributes: {
          searchAttributes: { indexedFields: { TemporalChangeVersion: keyword(['claim-and-publish-1', 'prepare-before-due-1'], 'KeywordList') } },
        },
      },
      { commandType: CommandType.START_TIMER, startTimerCommandAttributes: { timerId: '1', startToFireTimeout: { seconds: 7 * 86_400 } } },
    ],
    sdkMetadata: { langUsedFlags: [1, 2, 3], sdkName: 'temporal-typescript', sdkVersion: '1.24.0' },
    meteringMetadata: {},
    returnNewWorkflowTask: true,
    forceCreateNewWorkflowTask: false,
  });
  describeWorkflow(engine, { namespace: 'default', execution: { workflowId: run.workflowId, runId: run.runId } });
}

function heapUsed(gc: () => void): { total: number; arrayBuffers: number } {
  for (let i = 0; i < 3; i++) gc();
  const usage = process.memoryUsage();
  return { total: usage.heapUsed + usage.arrayBuffers, arrayBuffers: usage.arrayBuffers };
}

/**
 * Bytes of heap (V8 used + ArrayBuffers) each of `runs` more waiting runs holds, after full GCs, and of those the
 * ArrayBuffer memory (malloc'd, outside V8's heap).
 */
export function bytesPerWaitingRun(runs: number, gc: () => void, options: { finishedFirst?: boolean } = {}): { bytes: number; arrayBufferBytes: number; engine: Engine } {
  const engine = new Engine({ timeSkipping: false, namespace: 'default' });
  if (options.finishedFirst) finishedRun(engine);
  waitingRun(engine); // first use compiles and allocates what every run shares
  const before = heapUsed(gc);
  for (let i = 0; i < runs; i++) waitingRun(engine);
  const after = heapUsed(gc);
  return { bytes: (after.total - before.total) / runs, arrayBufferBytes: (after.arrayBuffers - before.arrayBuffers) / runs, engine };
}
