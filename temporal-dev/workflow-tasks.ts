// Workflow tasks: scheduling, handing them to pollers, completion, failure and timeout. Also the one rule for
// events that arrive from outside the workflow: append now and schedule a task, or hold them back while a task runs.
import { handleCommands } from './commands';
import type { Engine } from './engine';
import { notFound } from './errors';
import { duration, TaskQueueKind, timestamp, WorkflowTaskFailedCause, type Msg } from './proto';
import type { Run, WorkflowTask } from './run';
import type { PollRequest } from './task-queues';
import { answerAttachedQueries, attachedQueries, redispatchAttached } from './queries';
import { pendingUpdateMessages, requeueDeliveredUpdates } from './updates';

/** Adds an event that did not come from the workflow's own commands (signal, activity result, timer ...). */
export function deliverEvent(engine: Engine, run: Run, append: () => void): void {
  if (!run.open) return;
  if (run.wftRunning) {
    run.buffered.push(append);
    return;
  }
  append();
  scheduleWorkflowTask(engine, run);
}

export function scheduleWorkflowTask(engine: Engine, run: Run, attempt = 1): void {
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
  engine.queues.offer(run.namespace, 'workflow', run.taskQueue, { take: (poll) => takeWorkflowTask(engine, run, wft, poll) });
}

function scheduledAttrs(run: Run, attempt: number): Msg {
  return { taskQueue: { name: run.taskQueue, kind: TaskQueueKind.NORMAL }, startToCloseTimeout: duration(run.taskTimeoutMs), attempt };
}

function takeWorkflowTask(engine: Engine, run: Run, wft: WorkflowTask, poll: PollRequest): Msg | null {
  if (run.wft !== wft || wft.startedEventId !== 0 || !run.open) return null;
  const now = engine.now();
  const startedAttrs = (scheduledEventId: number) => ({
    scheduledEventId,
    identity: poll.identity,
    requestId: poll.requestId ?? '',
    historySizeBytes: run.historySizeBytes,
  });
  let history = run.events;
  if (wft.transient) {
    // Nothing is appended while the task runs (new events are held back), so these ids stay valid.
    wft.scheduledEventId = run.nextEventId;
    wft.startedEventId = wft.scheduledEventId + 1;
    wft.transientEvents = [
      run.makeEvent('WORKFLOW_TASK_SCHEDULED', scheduledAttrs(run, wft.attempt), wft.scheduledTime, wft.scheduledEventId),
      run.makeEvent('WORKFLOW_TASK_STARTED', startedAttrs(wft.scheduledEventId), now, wft.startedEventId),
    ];
    history = run.events.concat(wft.transientEvents);
  } else {
    wft.startedEventId = run.append('WORKFLOW_TASK_STARTED', startedAttrs(wft.scheduledEventId), now);
  }
  wft.startedTime = now;
  wft.timeout = engine.scheduler.after(run.taskTimeoutMs, () => timeOutWorkflowTask(engine, run, wft));
  return {
    taskToken: engine.encodeToken({ k: 'w', ns: run.namespace, r: run.runId, s: wft.scheduledEventId, a: wft.attempt }),
    workflowExecution: run.execution,
    workflowType: { name: run.workflowType },
    previousStartedEventId: run.lastCompletedStartedEventId,
    startedEventId: wft.startedEventId,
    attempt: wft.attempt,
    history: { events: history.slice() },
    workflowExecutionTaskQueue: { name: run.taskQueue, kind: TaskQueueKind.NORMAL },
    scheduledTime: timestamp(wft.scheduledTime),
    startedTime: timestamp(now),
    messages: pendingUpdateMessages(run, wft),
    queries: attachedQueries(engine, run),
  };
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
  const outcome = handleCommands(engine, run, commands, req.messages ?? [], completedEventId, wft, { identity: req.identity ?? '' });
  flushBuffered(run);
  if (run.open && (outcome.needsWorkflowTask || req.forceCreateNewWorkflowTask || run.wftWanted || hasUndelivered(run))) {
    scheduleWorkflowTask(engine, run);
  }
  for (const action of outcome.afterCommit) action();
  if (!run.wft) redispatchAttached(engine, run);
  // A run closed by the same completion has already dropped its activities: their tasks would only fail.
  return run.open && outcome.eagerActivityTasks.length ? { activityTasks: outcome.eagerActivityTasks } : {};
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

function finishTask(engine: Engine, run: Run, wft: WorkflowTask): void {
  wft.timeout?.cancel();
  run.wft = null;
  engine.workflowTasks.delete(run);
}

function flushBuffered(run: Run): void {
  const held = run.buffered;
  run.buffered = [];
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
  run.buffered = [];
  redispatchAttached(engine, run);
}
