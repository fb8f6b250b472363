// Workflow tasks: scheduling, handing them to pollers, completion, failure and timeout. Also the one rule for
// events that arrive from outside the workflow: append now and schedule a task, or hold them back while a task runs.
import { handleCommands } from './commands';
import type { Engine } from './engine';
import { notFound } from './errors';
import { terminateRun } from './executions';
import { CommandType, duration, encodeAnswer, EncodedMessage, TaskQueueKind, timestamp, WorkflowTaskFailedCause, type Msg } from './proto';
import type { Run } from './run';
import type { WorkflowTask } from './run-state';
import type { PollRequest } from './task-queues';
import { answerAttachedQueries, attachedQueries, redispatchAttached } from './queries';
import { commandsSizeRefusal, type SizedCommand } from './search-attribute-limits';
import { pendingUpdateMessages, requeueDeliveredUpdates } from './updates';

/** Adds an event that did not come from the workflow's own commands (signal, activity result, timer ...). */
export function deliverEvent(engine: Engine, run: Run, append: () => void): void {
  if (!run.open) return;
  if (run.wftRunning) {
    run.holdBack(append);
    return;
  }
  append();
  scheduleWorkflowTask(engine, run);
}

/**
 * Schedules the run's next workflow task and queues it for pollers. With `dispatch: false` the task is not queued:
 * the caller starts it at once for a known worker (see startScheduledWorkflowTask).
 */
export function scheduleWorkflowTask(engine: Engine, run: Run, attempt = 1, { dispatch = true } = {}): void {
  if (!run.open) return;
  if (run.wft) {
    if (run.wftRunning) run.wftWanted = true;
    return;
  }
  const now = engine.now();
  const transient = attempt > 1;
  const scheduledEventId = transient ? 0 : run.append('WORKFLOW_TASK_SCHEDULED', scheduledAttrs(run, attempt), now);
  const wft: WorkflowTask = {
    scheduledEventId,
    startedEventId: 0,
    attempt,
    transient,
    transientEvents: [],
    scheduledTime: now,
    startedTime: 0,
    deliveredUpdates: [],
  };
  run.wft = wft;
  run.wftWanted = false;
  engine.workflowTasks.set(run, Date.now());
  if (dispatch) {
    engine.queues.offer(run.namespace, 'workflow', run.taskQueue, { take: (poll) => takeWorkflowTask(engine, run, wft, poll) });
  }
}

/**
 * Starts the run's scheduled workflow task for `worker` without a poll, as the real server does for eager workflow
 * start and for `return_new_workflow_task`. A queued offer of the same task becomes a no-op (takeWorkflowTask
 * refuses a started task). `sinceLastCompleted` sends only the events after the last completed task's started
 * event, as the real server does when the worker has the run cached. Null when no task is waiting to start.
 */
export function startScheduledWorkflowTask(engine: Engine, run: Run, worker: PollRequest, history: 'full' | 'sinceLastCompleted'): Msg | null {
  const wft = run.wft;
  if (!wft || wft.startedEventId !== 0) return null;
  return takeWorkflowTask(engine, run, wft, worker, history);
}

function scheduledAttrs(run: Run, attempt: number): Msg {
  return { taskQueue: { name: run.taskQueue, kind: TaskQueueKind.NORMAL }, startToCloseTimeout: duration(run.taskTimeoutMs), attempt };
}

function takeWorkflowTask(engine: Engine, run: Run, wft: WorkflowTask, poll: PollRequest, history: 'full' | 'sinceLastCompleted' = 'full'): Msg | null {
  if (run.wft !== wft || wft.startedEventId !== 0 || !run.open) return null;
  const now = engine.now();
  const startedAttrs = (scheduledEventId: number) => ({
    scheduledEventId,
    identity: poll.identity,
    requestId: poll.requestId ?? '',
    historySizeBytes: run.historySizeBytes,
  });
  if (wft.transient) {
    // Nothing is appended while the task runs (new events are held back), so these ids stay valid.
    wft.scheduledEventId = run.nextEventId;
    wft.startedEventId = wft.scheduledEventId + 1;
    wft.transientEvents = [
      run.makeEvent('WORKFLOW_TASK_SCHEDULED', scheduledAttrs(run, wft.attempt), wft.scheduledTime, wft.scheduledEventId),
      run.makeEvent('WORKFLOW_TASK_STARTED', startedAttrs(wft.scheduledEventId), now, wft.startedEventId),
    ];
  } else {
    wft.startedEventId = run.append('WORKFLOW_TASK_STARTED', startedAttrs(wft.scheduledEventId), now);
  }
  wft.startedTime = now;
  // Event ids start at 1, so the events after the last completed task's started event begin at that index.
  const firstIndex = history === 'sinceLastCompleted' ? run.lastCompletedStartedEventId : 0;
  wft.timeout = engine.scheduler.after(run.taskTimeoutMs, () => timeOutWorkflowTask(engine, run, wft));
  return {
    taskToken: engine.encodeToken({ k: 'w', ns: run.namespace, r: run.runId, s: wft.scheduledEventId, a: wft.attempt }),
    workflowExecution: run.execution,
    workflowType: { name: run.workflowType },
    previousStartedEventId: run.lastCompletedStartedEventId,
    startedEventId: wft.startedEventId,
    attempt: wft.attempt,
    history: run.encodedHistory(firstIndex, wft.transient ? wft.transientEvents : []),
    workflowExecutionTaskQueue: { name: run.taskQueue, kind: TaskQueueKind.NORMAL },
    scheduledTime: timestamp(wft.scheduledTime),
    startedTime: timestamp(now),
    messages: pendingUpdateMessages(run, wft),
    queries: attachedQueries(engine, run),
  };
}

/**
 * A started task as a field of another response (eager start, `return_new_workflow_task`): encoded on its own first,
 * since its history is spliced in only at the top level of what `encodeAnswer` is given (see `EncodedMessage`).
 */
export function nestedWorkflowTask(task: Msg): EncodedMessage {
  return new EncodedMessage(encodeAnswer('temporal.api.workflowservice.v1.PollWorkflowTaskQueueResponse', task));
}

/** The run and running workflow task a task token refers to, or NOT_FOUND as the real server answers. */
function runningTask(engine: Engine, taskToken: Uint8Array): { run: Run; wft: WorkflowTask } {
  const token = engine.decodeToken(taskToken);
  const run = token.k === 'w' ? engine.namespaces.get(token.ns)?.runs.get(token.r) : undefined;
  const wft = run?.wft;
  if (!run || !wft || wft.scheduledEventId !== token.s || wft.attempt !== token.a || wft.startedEventId === 0) {
    throw notFound('Workflow task not found.');
  }
  return { run, wft };
}

const CLOSE_COMMANDS = new Set([4, 5, 7, 10]); // complete, fail, cancel, continue-as-new

export function completeWorkflowTask(engine: Engine, req: Msg): Msg {
  const { run, wft } = runningTask(engine, req.taskToken);
  const commands: Msg[] = req.commands ?? [];
  if (run.buffered.length > 0 && commands.some((c) => CLOSE_COMMANDS.has(c.commandType))) {
    // New events arrived while the workflow decided to close: the worker must see them first.
    endWorkflowTask(engine, run, wft, 'WORKFLOW_TASK_FAILED', {
      cause: WorkflowTaskFailedCause.UNHANDLED_COMMAND,
      identity: req.identity ?? '',
    });
    return {};
  }
  const sized = sizedCommands(commands);
  const refused = sized.length ? commandsSizeRefusal(run.searchAttributes, sized) : null;
  if (refused) {
    terminateForBadCommand(engine, run, wft, SIZE_REFUSAL_CAUSES[refused.kind], refused.refusal, req.identity ?? '');
    return {};
  }
  finishTask(engine, run, wft);
  for (const event of wft.transientEvents) run.appendEvent(event);
  const completedEventId = run.append(
    'WORKFLOW_TASK_COMPLETED',
    {
      scheduledEventId: wft.scheduledEventId,
      startedEventId: wft.startedEventId,
      identity: req.identity ?? '',
      binaryChecksum: req.binaryChecksum ?? '',
      sdkMetadata: req.sdkMetadata,
      meteringMetadata: req.meteringMetadata,
      workerVersion: req.workerVersionStamp,
    },
    engine.now(),
  );
  run.lastCompletedStartedEventId = wft.startedEventId;
  answerAttachedQueries(engine, run, req.queryResults ?? {});
  const worker = { identity: req.identity ?? '' };
  const outcome = handleCommands(engine, run, commands, req.messages ?? [], completedEventId, wft, worker);
  flushBuffered(run);
  // As the real server: asked to return the next task (sdk-core asks whenever it caches the run), a task this
  // completion creates is started for the same worker right away and returned, never queued. That is also how
  // sdk-core heartbeats a workflow task while a local activity runs (force_create_new_workflow_task).
  const returnNewTask = req.returnNewWorkflowTask === true;
  if (run.open && (outcome.needsWorkflowTask || req.forceCreateNewWorkflowTask || run.wftWanted || hasUndelivered(run))) {
    scheduleWorkflowTask(engine, run, 1, { dispatch: !returnNewTask });
  }
  // The worker has the run cached (that is when sdk-core asks), so it gets the history since its last task only.
  const sameWorker = { ...worker, requestId: 'request-from-RespondWorkflowTaskCompleted' }; // the real server's
  const newTask = returnNewTask && run.open ? startScheduledWorkflowTask(engine, run, sameWorker, 'sinceLastCompleted') : null;
  // Effects on other runs follow the commit; any that come back to this run are held back by the started task.
  for (const action of outcome.afterCommit) action();
  if (!run.wft) redispatchAttached(engine, run);
  // The run may now wait for days (a timer, a signal): its history's buffer shrinks to what it holds.
  run.compact(engine.now());
  const response: Msg = {};
  if (newTask) response.workflowTask = nestedWorkflowTask(newTask);
  // A run closed by the same completion has already dropped its activities: their tasks would only fail.
  if (run.open && outcome.eagerActivityTasks.length) response.activityTasks = outcome.eagerActivityTasks;
  return response;
}

export function failWorkflowTask(engine: Engine, req: Msg): Msg {
  const { run, wft } = runningTask(engine, req.taskToken);
  endWorkflowTask(engine, run, wft, 'WORKFLOW_TASK_FAILED', {
    cause: req.cause ?? WorkflowTaskFailedCause.UNSPECIFIED,
    failure: req.failure,
    identity: req.identity ?? '',
    binaryChecksum: req.binaryChecksum ?? '',
  });
  return {};
}

function timeOutWorkflowTask(engine: Engine, run: Run, wft: WorkflowTask): void {
  if (run.wft !== wft || !run.open) return;
  endWorkflowTask(engine, run, wft, 'WORKFLOW_TASK_TIMED_OUT', { timeoutType: 1 /* START_TO_CLOSE */ });
}

/** A task that failed or timed out: record it, let held-back events in, and schedule the next attempt. */
function endWorkflowTask(engine: Engine, run: Run, wft: WorkflowTask, type: string, attrs: Msg): void {
  finishTask(engine, run, wft);
  requeueDeliveredUpdates(run, wft);
  if (!wft.transient) {
    run.append(type, { scheduledEventId: wft.scheduledEventId, startedEventId: wft.startedEventId, ...attrs }, engine.now());
  }
  const newEvents = run.buffered.length > 0;
  flushBuffered(run);
  // New events make the next task a regular one; otherwise the retry stays transient.
  scheduleWorkflowTask(engine, run, newEvents ? 1 : wft.attempt + 1);
}

/**
 * As the real server for a command beyond a size limit: the task fails (none of its commands take effect) and the
 * workflow is terminated, the reason naming the cause, by the history service rather than retried for ever.
 */
/** The commands whose search attributes the size limits apply to (`commandsSizeRefusal`), in their order. */
function sizedCommands(commands: readonly Msg[]): SizedCommand[] {
  const sized: SizedCommand[] = [];
  for (const c of commands) {
    if (c.commandType === CommandType.UPSERT_WORKFLOW_SEARCH_ATTRIBUTES) {
      sized.push({ kind: 'upsert', fields: c.upsertWorkflowSearchAttributesCommandAttributes?.searchAttributes?.indexedFields ?? {} });
    } else if (c.commandType === CommandType.START_CHILD_WORKFLOW_EXECUTION) {
      sized.push({ kind: 'startChild', fields: c.startChildWorkflowExecutionCommandAttributes?.searchAttributes?.indexedFields });
    } else if (c.commandType === CommandType.CONTINUE_AS_NEW_WORKFLOW_EXECUTION) {
      sized.push({ kind: 'continueAsNew', fields: c.continueAsNewWorkflowExecutionCommandAttributes?.searchAttributes?.indexedFields });
    }
  }
  return sized;
}

/** The cause the real server fails the task with (and terminates the workflow) for each command beyond the limits. */
const SIZE_REFUSAL_CAUSES: Record<SizedCommand['kind'], number> = {
  upsert: WorkflowTaskFailedCause.BAD_SEARCH_ATTRIBUTES!,
  startChild: WorkflowTaskFailedCause.BAD_START_CHILD_EXECUTION_ATTRIBUTES!,
  continueAsNew: WorkflowTaskFailedCause.BAD_CONTINUE_AS_NEW_ATTRIBUTES!,
};

function terminateForBadCommand(engine: Engine, run: Run, wft: WorkflowTask, cause: number, message: string, identity: string): void {
  const causeName = Object.entries(WorkflowTaskFailedCause).find(([, value]) => value === cause)![0];
  const reason = `WORKFLOW_TASK_FAILED_CAUSE_${causeName}: ${message}`;
  finishTask(engine, run, wft);
  requeueDeliveredUpdates(run, wft);
  for (const event of wft.transientEvents) run.appendEvent(event);
  run.append(
    'WORKFLOW_TASK_FAILED',
    { scheduledEventId: wft.scheduledEventId, startedEventId: wft.startedEventId, cause, failure: { message: reason, serverFailureInfo: { nonRetryable: true } }, identity },
    engine.now(),
  );
  flushBuffered(run);
  terminateRun(engine, run, reason, undefined, 'history-service');
}

function finishTask(engine: Engine, run: Run, wft: WorkflowTask): void {
  wft.timeout?.cancel();
  run.wft = null;
  engine.workflowTasks.delete(run);
}

function flushBuffered(run: Run): void {
  const held = run.takeHeld();
  if (!run.open) return;
  for (const append of held) append();
  if (held.length) run.wftWanted = true;
}

function hasUndelivered(run: Run): boolean {
  for (const u of run.updates.values()) if (!u.delivered && u.stage < 2) return true;
  return false;
}

/** Drops the workflow task of a run that just closed. */
export function dropWorkflowTask(engine: Engine, run: Run): void {
  if (run.wft) finishTask(engine, run, run.wft);
  run.takeHeld();
  redispatchAttached(engine, run);
}
