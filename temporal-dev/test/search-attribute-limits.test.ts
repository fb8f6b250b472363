// Temporal's default search-attribute size limits (2 KiB a value, 40 KiB in all), enforced as the real server does:
// a start or signal-with-start beyond them is refused with INVALID_ARGUMENT before anything else, an upsert beyond
// them fails its workflow task and terminates the workflow. A dev server that never checked let Herald ship thread
// workflows a real cluster refuses.
import assert from 'node:assert/strict';
import { status } from '@grpc/grpc-js';
import { ServiceError } from '@temporalio/client';
import { SEARCH_ATTRIBUTE_LIMITS } from '../limits';
import { temporalServerKind } from '../../test/helpers/temporal';
import { useSuite } from './setup';
import { continuesAsNewWithLongKeywordList, sleepsForever, startsChildWithLongKeywordList, upsertsLongKeywordList } from './workflows';

/** `count` uuid-like values: a keyword list of them is 39 × count + 1 bytes of JSON. */
const values = (count: number) => Array.from({ length: count }, (_, i) => `${String(i).padStart(8, '0')}-0000-4000-8000-000000000000`);

function refusedAsInvalid(pattern: RegExp) {
  return (err: unknown) => {
    assert.ok(err instanceof ServiceError, String(err));
    const cause = err.cause as { code?: number; details?: string };
    assert.equal(cause.code, status.INVALID_ARGUMENT);
    assert.match(String(cause.details), pattern);
    return true;
  };
}

describe('temporal-dev: search attribute size limits', function () {
  this.timeout(60_000);
  const s = useSuite();

  it('has the real server defaults', () => {
    assert.deepEqual(SEARCH_ATTRIBUTE_LIMITS, { valueBytes: 2048, totalBytes: 40960 });
  });

  it('starts a workflow whose value is at the limit and refuses one byte-wise over it, even when one is running', async () => {
    const taskQueue = s.taskQueue();
    const workflowId = `sa-value-${taskQueue}`;
    // 52 values: 2,029 bytes; 53: 2,068.
    const handle = await s.env.client.workflow.start(sleepsForever, { taskQueue, workflowId, searchAttributes: { CustomKeywordField: values(52) } });
    const tooLong = { CustomKeywordField: values(53) };
    await assert.rejects(
      s.env.client.workflow.start(sleepsForever, { taskQueue, workflowId: `${workflowId}-2`, searchAttributes: tooLong }),
      refusedAsInvalid(/^search attribute CustomKeywordField value size 2068 exceeds size limit 2048$/),
    );
    // The frontend checks before it looks for the workflow: USE_EXISTING does not let it through.
    await assert.rejects(
      s.env.client.workflow.start(sleepsForever, { taskQueue, workflowId, searchAttributes: tooLong, workflowIdConflictPolicy: 'USE_EXISTING' }),
      refusedAsInvalid(/value size 2068 exceeds size limit 2048/),
    );
    await assert.rejects(
      s.env.client.workflow.signalWithStart(sleepsForever, { taskQueue, workflowId, signal: 'nothing', searchAttributes: tooLong }),
      refusedAsInvalid(/value size 2068 exceeds size limit 2048/),
    );
    await assert.rejects(
      s.env.client.workflow.signalWithStart(sleepsForever, { taskQueue, workflowId: `${workflowId}-3`, signal: 'nothing', searchAttributes: tooLong }),
      refusedAsInvalid(/value size 2068 exceeds size limit 2048/),
    );
    await assert.rejects(s.env.client.workflow.getHandle(`${workflowId}-2`).describe(), /not found/i);
    await handle.terminate('cleanup');
  });

  it('refuses a start whose attributes together exceed 40 KiB', async function () {
    // Twenty-odd attributes of 2 KiB: temporal-dev takes any name; a real server would first want them registered.
    if (temporalServerKind !== 'temporal-dev') this.skip();
    const taskQueue = s.taskQueue();
    const searchAttributes = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`CustomList${i}`, values(52)]));
    await assert.rejects(
      s.env.client.workflow.start(sleepsForever, { taskQueue, workflowId: `sa-total-${taskQueue}`, searchAttributes }),
      refusedAsInvalid(/^total size of search attributes \d+ exceeds size limit 40960$/),
    );
  });

  it('terminates a workflow whose upsert goes beyond the limit, its task failed with BAD_SEARCH_ATTRIBUTES', async () => {
    const taskQueue = s.taskQueue();
    await s.withWorker(taskQueue, async () => {
      const fits = await s.env.client.workflow.start(upsertsLongKeywordList, { taskQueue, workflowId: `sa-upsert-ok-${taskQueue}`, args: [52] });
      assert.equal(await fits.result(), 'ok');
      const handle = await s.env.client.workflow.start(upsertsLongKeywordList, { taskQueue, workflowId: `sa-upsert-${taskQueue}`, args: [53] });
      await assert.rejects(handle.result(), /WORKFLOW_TASK_FAILED_CAUSE_BAD_SEARCH_ATTRIBUTES: search attribute CustomKeywordField value size 2068/);
      const description = await handle.describe();
      assert.equal(description.status.name, 'TERMINATED');
      const history = await handle.fetchHistory();
      const events = history.events ?? [];
      const failed = events.find((e) => e.workflowTaskFailedEventAttributes)?.workflowTaskFailedEventAttributes;
      assert.ok(failed, 'a failed workflow task');
      assert.equal(failed.cause, 23 /* WORKFLOW_TASK_FAILED_CAUSE_BAD_SEARCH_ATTRIBUTES */);
      const terminated = events.find((e) => e.workflowExecutionTerminatedEventAttributes)?.workflowExecutionTerminatedEventAttributes;
      assert.match(String(terminated?.reason), /^WORKFLOW_TASK_FAILED_CAUSE_BAD_SEARCH_ATTRIBUTES: search attribute CustomKeywordField value size 2068 exceeds size limit 2048$/);
      assert.equal(events.some((e) => e.upsertWorkflowSearchAttributesEventAttributes), false, 'the upsert never took effect');
    });
  });

  /** The run's history: its failed task's cause, its termination's reason, and whether `also` happened. */
  const refusedTask = async (handle: { fetchHistory(): Promise<{ events?: Array<Record<string, any>> | null }> }) => {
    const events = (await handle.fetchHistory()).events ?? [];
    return {
      cause: events.find((e) => e.workflowTaskFailedEventAttributes)?.workflowTaskFailedEventAttributes?.cause,
      reason: String(events.find((e) => e.workflowExecutionTerminatedEventAttributes)?.workflowExecutionTerminatedEventAttributes?.reason),
      events,
    };
  };

  it('terminates a workflow whose child start carries attributes beyond the limit (BAD_START_CHILD_EXECUTION_ATTRIBUTES), the child never started', async () => {
    const taskQueue = s.taskQueue();
    await s.withWorker(taskQueue, async () => {
      const fits = await s.env.client.workflow.start(startsChildWithLongKeywordList, { taskQueue, workflowId: `sa-child-ok-${taskQueue}`, args: [52] });
      assert.equal(await fits.result(), 'ok');
      const workflowId = `sa-child-${taskQueue}`;
      const handle = await s.env.client.workflow.start(startsChildWithLongKeywordList, { taskQueue, workflowId, args: [53] });
      await assert.rejects(handle.result(), /WORKFLOW_TASK_FAILED_CAUSE_BAD_START_CHILD_EXECUTION_ATTRIBUTES: search attribute CustomKeywordField value size 2068 exceeds size limit 2048/);
      assert.equal((await handle.describe()).status.name, 'TERMINATED');
      const { cause, reason, events } = await refusedTask(handle);
      assert.equal(cause, 16 /* WORKFLOW_TASK_FAILED_CAUSE_BAD_START_CHILD_EXECUTION_ATTRIBUTES */);
      assert.match(reason, /^WORKFLOW_TASK_FAILED_CAUSE_BAD_START_CHILD_EXECUTION_ATTRIBUTES: search attribute CustomKeywordField value size 2068 exceeds size limit 2048$/);
      assert.equal(events.some((e) => e.startChildWorkflowExecutionInitiatedEventAttributes), false, 'the child start never took effect');
      await assert.rejects(s.env.client.workflow.getHandle(`${workflowId}-child`).describe(), /not found/i);
    });
  });

  it('terminates a workflow whose continue-as-new carries attributes beyond the limit (BAD_CONTINUE_AS_NEW_ATTRIBUTES), no new run', async () => {
    const taskQueue = s.taskQueue();
    await s.withWorker(taskQueue, async () => {
      const fits = await s.env.client.workflow.start(continuesAsNewWithLongKeywordList, { taskQueue, workflowId: `sa-can-ok-${taskQueue}`, args: [52] });
      assert.equal(await fits.result(), 'ok');
      const handle = await s.env.client.workflow.start(continuesAsNewWithLongKeywordList, { taskQueue, workflowId: `sa-can-${taskQueue}`, args: [53], followRuns: false });
      await assert.rejects(handle.result(), /WORKFLOW_TASK_FAILED_CAUSE_BAD_CONTINUE_AS_NEW_ATTRIBUTES: search attribute CustomKeywordField value size 2068 exceeds size limit 2048/);
      assert.equal((await handle.describe()).status.name, 'TERMINATED');
      const { cause, reason, events } = await refusedTask(handle);
      assert.equal(cause, 11 /* WORKFLOW_TASK_FAILED_CAUSE_BAD_CONTINUE_AS_NEW_ATTRIBUTES */);
      assert.match(reason, /^WORKFLOW_TASK_FAILED_CAUSE_BAD_CONTINUE_AS_NEW_ATTRIBUTES: search attribute CustomKeywordField value size 2068 exceeds size limit 2048$/);
      assert.equal(events.some((e) => e.workflowExecutionContinuedAsNewEventAttributes), false, 'no new run');
    });
  });
});
