// Workflows for the temporal-dev suite: one per behaviour under test.
import {
  ActivityCancellationType,
  ApplicationFailure,
  CancellationScope,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  defineUpdate,
  executeChild,
  getExternalWorkflowHandle,
  makeContinueAsNewFunc,
  isCancellation,
  ParentClosePolicy,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
  startChild,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type * as activities from '../activities';

const { greet, flaky, failNonRetryable, alwaysFails } = proxyActivities<typeof activities>({
  startToCloseTimeout: '10s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumAttempts: 5 },
});

export async function greeting(name: string): Promise<string> {
  return await greet(name);
}

export async function retried(succeedOnAttempt: number): Promise<number> {
  return await flaky(succeedOnAttempt);
}

export async function failsNonRetryably(): Promise<void> {
  await failNonRetryable('bad input');
}

export async function exhaustsRetries(): Promise<void> {
  const { alwaysFails: limited } = proxyActivities<typeof activities>({
    startToCloseTimeout: '10s',
    retry: { initialInterval: '1s', maximumAttempts: 3 },
  });
  void alwaysFails;
  await limited();
}

export async function sleeper(ms: number): Promise<number> {
  const started = Date.now();
  await sleep(ms);
  return Date.now() - started;
}

export async function throwsApplicationError(): Promise<void> {
  const { ApplicationFailure } = await import('@temporalio/workflow');
  throw ApplicationFailure.nonRetryable('workflow says no', 'WorkflowRefusal');
}

export const addSignal = defineSignal<[number]>('add');
export const finishSignal = defineSignal('finish');
export const totalQuery = defineQuery<number>('total');
export const failingQuery = defineQuery<number>('failing');
export const incrementUpdate = defineUpdate<number, [number]>('increment');

/** Sums `add` signals until `finish`; answers `total` queries and `increment` updates (negatives rejected). */
export async function accumulator(): Promise<number> {
  let total = 0;
  let finished = false;
  setHandler(addSignal, (n) => void (total += n));
  setHandler(finishSignal, () => void (finished = true));
  setHandler(totalQuery, () => total);
  setHandler(failingQuery, () => {
    throw new Error('query handler failed');
  });
  setHandler(
    incrementUpdate,
    async (n) => {
      await sleep(10);
      total += n;
      return total;
    },
    {
      validator: (n) => {
        if (n < 0) throw new Error('negative increments are rejected');
      },
    },
  );
  await condition(() => finished);
  return total;
}

/** Waits a day; cancellation propagates as the workflow's result. */
export async function waitsADay(): Promise<string> {
  await sleep('1 day');
  return 'slept a day';
}

/** Cancels a heartbeating activity after a timer and reports how the activity ended. */
export async function cancelsActivity(): Promise<string> {
  const { heartbeatUntilCancelled } = proxyActivities<typeof activities>({
    startToCloseTimeout: '1m',
    heartbeatTimeout: '1s', // heartbeats (and so cancellation) reach the server every 0.8 s
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  });
  const scope = new CancellationScope();
  const running = scope.run(() => heartbeatUntilCancelled());
  await sleep(300);
  scope.cancel();
  try {
    await running;
    return 'completed';
  } catch (err) {
    return isCancellation(err) ? 'cancelled' : `failed: ${(err as Error).message}`;
  }
}

/** Runs one activity with the given timeouts so a test can observe which timeout fires. */
export async function activityWithTimeouts(
  activity: 'sleepy' | 'heartbeatOnceThenHang',
  options: { startToCloseMs?: number; scheduleToStartMs?: number; scheduleToCloseMs?: number; heartbeatMs?: number; maximumAttempts?: number; taskQueue?: string },
): Promise<string> {
  const acts = proxyActivities<typeof activities>({
    startToCloseTimeout: options.startToCloseMs,
    scheduleToStartTimeout: options.scheduleToStartMs,
    scheduleToCloseTimeout: options.scheduleToCloseMs,
    heartbeatTimeout: options.heartbeatMs,
    taskQueue: options.taskQueue,
    retry: { initialInterval: '100ms', maximumAttempts: options.maximumAttempts ?? 1 },
  });
  return activity === 'sleepy' ? await acts.sleepy(60_000) : await acts.heartbeatOnceThenHang();
}

export async function child(name: string): Promise<string> {
  return `child says hi to ${name}`;
}

export async function parent(name: string): Promise<string> {
  return await executeChild(child, { args: [name], workflowId: `${workflowInfo().workflowId}-child` });
}

/** Runs until cancelled or terminated: no timer, so time skipping can never end it on its own. */
export async function waitsUntilStopped(): Promise<never> {
  await condition(() => false);
  throw new Error('unreachable');
}

/** Starts a long-running child with the given parent-close policy and returns at once. */
export async function parentLeavingChild(policy: 'ABANDON' | 'TERMINATE' | 'REQUEST_CANCEL'): Promise<string> {
  // The child waits on no timer: a sleeping child could be run out by time skipping before the test looks at it.
  const handle = await startChild(waitsUntilStopped, {
    workflowId: `${workflowInfo().workflowId}-child`,
    parentClosePolicy: ParentClosePolicy[`PARENT_CLOSE_POLICY_${policy}`],
  });
  return handle.workflowId;
}

export async function countdown(n: number): Promise<string> {
  if (n > 0) await continueAsNew<typeof countdown>(n - 1);
  return `done after ${workflowInfo().continuedFromExecutionRunId ? 'continuing' : 'first run'}`;
}

export async function upsertsSearchAttributes(): Promise<string> {
  upsertSearchAttributes({ CustomKeywordField: ['upserted'] });
  await sleep(10);
  return 'ok';
}

/** Upserts a keyword list of `count` 36-character values (past 52 of them, beyond the default 2 KiB per value). */
export async function upsertsLongKeywordList(count: number): Promise<string> {
  upsertSearchAttributes({ CustomKeywordField: Array.from({ length: count }, (_, i) => `${String(i).padStart(36, '0')}`) });
  await sleep(10);
  return 'ok';
}

export async function sleepsForever(): Promise<void> {
  await condition(() => false);
}

/** A keyword list of `count` 36-character values: 39 × count + 1 bytes of JSON (52 fit in 2 KiB, 53 do not). */
const longKeywordList = (count: number) => Array.from({ length: count }, (_, i) => `${String(i).padStart(36, '0')}`);

/** Starts a child carrying a keyword list of `count` values (it is terminated when this one ends). */
export async function startsChildWithLongKeywordList(count: number): Promise<string> {
  await startChild(sleepsForever, { workflowId: `${workflowInfo().workflowId}-child`, searchAttributes: { CustomKeywordField: longKeywordList(count) } });
  return 'ok';
}

/** Continues as new once, the new run carrying a keyword list of `count` values. */
export async function continuesAsNewWithLongKeywordList(count: number, continued = false): Promise<string> {
  if (continued) return 'ok';
  return makeContinueAsNewFunc<typeof continuesAsNewWithLongKeywordList>({ searchAttributes: { CustomKeywordField: longKeywordList(count) } })(count, true);
}

export async function localGreeting(name: string): Promise<string> {
  const { greet: localGreet } = proxyLocalActivities<typeof activities>({ startToCloseTimeout: '5s' });
  return await localGreet(name);
}

/** Signals another workflow (add 9, then finish) through signal-external commands. */
export async function signalsAnother(targetId: string): Promise<void> {
  const target = getExternalWorkflowHandle(targetId);
  await target.signal(addSignal, 9);
  await target.signal(finishSignal);
}

export async function cancelsAnother(targetId: string): Promise<void> {
  await getExternalWorkflowHandle(targetId).cancel();
}

/** Throws a plain Error: the SDK fails the workflow task (not the workflow), and the server retries the task. */
export async function failsItsWorkflowTask(): Promise<void> {
  throw new Error('bug in workflow code');
}

/** Runs `sleepy(ms)` with a tight start-to-close timeout. */
export async function runsSleepy(ms: number, startToCloseMs: number): Promise<string> {
  const { sleepy } = proxyActivities<typeof activities>({ startToCloseTimeout: startToCloseMs, retry: { maximumAttempts: 1 } });
  return await sleepy(ms);
}

/** Fails (retryably) until the workflow's own attempt `succeedOn`; used with a workflow retry policy. */
export async function succeedsOnAttempt(succeedOn: number): Promise<number> {
  const { attempt } = workflowInfo();
  if (attempt < succeedOn) throw ApplicationFailure.create({ message: `workflow attempt ${attempt} failed`, type: 'Transient' });
  return attempt;
}

/** The timed wait Herald's workflows use: a signal or a deadline, whichever comes first. */
export async function waitsForSignalOrTimeout(ms: number): Promise<string> {
  let go = false;
  setHandler(finishSignal, () => void (go = true));
  return (await condition(() => go, ms)) ? 'signalled' : 'timed out';
}

/** Gives up on a slow activity after 200 ms (TRY_CANCEL: the workflow does not wait for the activity). */
export async function abandonsSlowActivity(): Promise<string> {
  const { sleepy } = proxyActivities<typeof activities>({ startToCloseTimeout: '10s' });
  try {
    await CancellationScope.withTimeout(200, () => sleepy(2000));
    return 'finished';
  } catch (err) {
    return isCancellation(err) ? 'gave up' : `failed: ${(err as Error).message}`;
  }
}

export async function awaitsAsyncActivity(): Promise<string> {
  const { completesLater } = proxyActivities<typeof activities>({ startToCloseTimeout: '1 minute' });
  return await completesLater();
}

/** A local activity that outlives the workflow task timeout: sdk-core heartbeats the workflow task meanwhile. */
export async function slowLocalActivity(ms: number): Promise<string> {
  const { sleepy } = proxyLocalActivities<typeof activities>({ startToCloseTimeout: '1 minute' });
  return await sleepy(ms);
}

/** A local activity retried by its retry policy (short backoff, so sdk-core retries it in the worker). */
export async function retriedLocalActivity(succeedOnAttempt: number): Promise<number> {
  const { flaky: localFlaky } = proxyLocalActivities<typeof activities>({
    startToCloseTimeout: '5s',
    retry: { initialInterval: '100ms', backoffCoefficient: 1, maximumAttempts: 5 },
  });
  return await localFlaky(succeedOnAttempt);
}
