// Run lifecycle: start (with workflow-id reuse and conflict policies, request-id dedup), signal, cancel request,
// terminate, run/execution timeouts, continue-as-new, and closing a run with everything that hangs off it.
import { randomUUID } from 'node:crypto';
import { dropActivities } from './activities';
import { applyParentClosePolicy, notifyParent } from './children';
import { RETENTION_MS, type Engine, type Namespace } from './engine';
import { invalidArgument, unimplemented, workflowAlreadyStarted, workflowCompleted } from './errors';
import {
  ConflictPolicy,
  duration,
  durationMs,
  flatString,
  RetryState,
  ReusePolicy,
  TaskQueueKind,
  timestamp,
  WorkflowStatus,
  WorkflowTaskFailedCause,
  type Msg,
} from './proto';
import { retryDecision } from './retry-policy';
import { Run } from './run';
import { wakeUpdateWaiters } from './updates';
import { deliverEvent, dropWorkflowTask, scheduleWorkflowTask, startScheduledWorkflowTask } from './workflow-tasks';

interface RunLinks {
  parent?: Run['parent'];
  attempt?: number;
  initiator?: number;
  runId?: string;
  firstExecutionRunId?: string;
  continuedExecutionRunId?: string;
  executionExpiry?: number;
}

interface StartOutcome {
  run: Run;
  /** False when an existing run is returned. */
  started: boolean;
  /** The new run's first workflow task, already started for the caller (eager workflow start). */
  eagerWorkflowTask?: Msg;
}

/**
 * StartWorkflowExecution semantics. With `allowEager` (plain StartWorkflowExecution only, as on the real server)
 * and `request_eager_execution`, a new run without a start delay gets its first workflow task started for the
 * caller and returned instead of queued; sdk-core asks for that only when it has reserved a slot on a worker of
 * the task queue, and routes the task to that worker. A returned existing run (dedup, USE_EXISTING) is never eager.
 */
export function startWorkflow(engine: Engine, req: Msg, links: RunLinks = {}, { allowEager = false } = {}): StartOutcome {
  const ns = engine.ns(req.namespace);
  const workflowId: string = req.workflowId ?? '';
  if (!workflowId) throw invalidArgument('WorkflowId is not set on request.');
  if (!req.workflowType?.name) throw invalidArgument('WorkflowType is not set on request.');
  if (!req.taskQueue?.name) throw invalidArgument('TaskQueue is not set on request.');
  if (req.cronSchedule) throw unimplemented('cron schedules are not supported by temporal-dev');
  const existing = engine.currentRun(ns.name, workflowId);
  if (existing) {
    if (req.requestId && existing.requestId === req.requestId) return { run: existing, started: true };
    const conflict = req.workflowIdConflictPolicy ?? ConflictPolicy.UNSPECIFIED;
    const reuse = req.workflowIdReusePolicy ?? ReusePolicy.UNSPECIFIED;
    if (existing.open) {
      if (conflict === ConflictPolicy.USE_EXISTING) return { run: existing, started: false };
      if (conflict === ConflictPolicy.TERMINATE_EXISTING || reuse === ReusePolicy.TERMINATE_IF_RUNNING) {
        terminateRun(engine, existing, 'terminated by a new start with the same workflow id (conflict policy)', undefined, req.identity);
      } else {
        throw workflowAlreadyStarted(workflowId, existing.requestId, existing.runId);
      }
    } else if (
      reuse === ReusePolicy.REJECT_DUPLICATE ||
      (reuse === ReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY && existing.status === WorkflowStatus.COMPLETED)
    ) {
      throw workflowAlreadyStarted(workflowId, existing.requestId, existing.runId);
    }
  }
  const eager = allowEager && req.requestEagerExecution === true && !durationMs(req.workflowStartDelay);
  const run = createRun(engine, ns, req, links, { dispatchFirstTask: !eager });
  if (!eager) return { run, started: true };
  const starter = { identity: req.identity ?? '', requestId: req.requestId ?? '' };
  return { run, started: true, eagerWorkflowTask: startScheduledWorkflowTask(engine, run, starter, 'full') ?? undefined };
}

/**
 * One string for each workflow type and task queue name, not a copy per run decoded from each request (a waiting
 * run keeps both). Bounded, as a client chooses the names.
 */
const interned = new Map<string, string>();
function intern(name: string): string {
  const known = interned.get(name);
  if (known !== undefined) return known;
  if (interned.size < 1000) interned.set(name, name);
  return name;
}

function createRun(engine: Engine, ns: Namespace, req: Msg, links: RunLinks, { dispatchFirstTask = true } = {}): Run {
  const now = engine.now();
  const runId = links.runId ?? randomUUID();
  const firstExecutionRunId = links.firstExecutionRunId ?? runId;
  const taskTimeoutMs = Math.min(durationMs(req.workflowTaskTimeout) || 10_000, 120_000);
  const executionTimeoutMs = durationMs(req.workflowExecutionTimeout);
  const runTimeoutMs = durationMs(req.workflowRunTimeout) || executionTimeoutMs;
  const executionExpiry = links.executionExpiry ?? (executionTimeoutMs ? now + executionTimeoutMs : 0);
  const startDelayMs = durationMs(req.workflowStartDelay ?? req.backoffStartInterval);
  const parent = links.parent;
  const started: Msg = {
    workflowType: req.workflowType,
    parentWorkflowNamespace: parent?.namespace,
    parentWorkflowNamespaceId: parent ? engine.ns(parent.namespace).id : undefined,
    parentWorkflowExecution: parent ? { workflowId: parent.workflowId, runId: parent.runId } : undefined,
    parentInitiatedEventId: parent?.initiatedEventId,
    taskQueue: { name: req.taskQueue.name, kind: TaskQueueKind.NORMAL },
    input: req.input,
    workflowExecutionTimeout: executionTimeoutMs ? duration(executionTimeoutMs) : undefined,
    workflowRunTimeout: runTimeoutMs ? duration(runTimeoutMs) : undefined,
    workflowTaskTimeout: duration(taskTimeoutMs),
    continuedExecutionRunId: links.continuedExecutionRunId,
    initiator: links.initiator,
    continuedFailure: req.continuedFailure ?? req.failure,
    lastCompletionResult: req.lastCompletionResult,
    originalExecutionRunId: runId,
    identity: req.identity ?? '',
    firstExecutionRunId,
    retryPolicy: req.retryPolicy,
    attempt: links.attempt ?? 1,
    workflowExecutionExpirationTime: executionExpiry ? timestamp(executionExpiry) : undefined,
    firstWorkflowTaskBackoff: startDelayMs ? duration(startDelayMs) : undefined,
    memo: req.memo,
    searchAttributes: req.searchAttributes,
    header: req.header,
    workflowId: req.workflowId,
    priority: req.priority,
  };
  const run = new Run(ns.name, req.workflowId, runId, firstExecutionRunId, intern(req.workflowType.name), intern(req.taskQueue.name), now, started, taskTimeoutMs, executionExpiry, flatString(req.requestId ?? ''));
  run.parent = parent;
  run.startDelayMs = startDelayMs;
  run.append('WORKFLOW_EXECUTION_STARTED', started, now); // its memo and search attributes: Run.properties
  ns.currentRuns.set(run.workflowId, run);
  ns.runs.set(runId, run);
  const timeoutsAt = runTimeoutMs ? [now + runTimeoutMs] : [];
  if (executionExpiry && executionExpiry !== now + runTimeoutMs) timeoutsAt.push(executionExpiry);
  if (timeoutsAt.length) run.runTimeouts = timeoutsAt.map((at) => engine.scheduler.at(at, () => timeOutRun(engine, run)));
  if (startDelayMs) engine.scheduler.after(startDelayMs, () => scheduleWorkflowTask(engine, run));
  else scheduleWorkflowTask(engine, run, 1, { dispatch: dispatchFirstTask });
  return run;
}

const CLOSE_STATUS: Record<string, number> = {
  WORKFLOW_EXECUTION_COMPLETED: WorkflowStatus.COMPLETED!,
  WORKFLOW_EXECUTION_FAILED: WorkflowStatus.FAILED!,
  WORKFLOW_EXECUTION_CANCELED: WorkflowStatus.CANCELED!,
  WORKFLOW_EXECUTION_TERMINATED: WorkflowStatus.TERMINATED!,
  WORKFLOW_EXECUTION_CONTINUED_AS_NEW: WorkflowStatus.CONTINUED_AS_NEW!,
  WORKFLOW_EXECUTION_TIMED_OUT: WorkflowStatus.TIMED_OUT!,
};

export function closeRun(engine: Engine, run: Run, type: string, attrs: Msg): void {
  if (!run.open) return;
  const now = engine.now();
  if (run.wftRunning) {
    // Closed from outside while a worker holds a task: the task is failed, held-back events are kept.
    const wft = run.wft!;
    if (!wft.transient) {
      run.append(
        'WORKFLOW_TASK_FAILED',
        { scheduledEventId: wft.scheduledEventId, startedEventId: wft.startedEventId, cause: WorkflowTaskFailedCause.FORCE_CLOSE_COMMAND },
        now,
      );
    }
    for (const append of run.buffered) append();
  }
  dropWorkflowTask(engine, run);
  run.status = CLOSE_STATUS[type]!;
  run.closeTime = now;
  run.append(type, attrs, now);
  for (const t of run.runTimeouts) t.cancel();
  for (const timer of run.takeTimers()) timer.cancel();
  dropActivities(engine, run);
  wakeUpdateWaiters(run);
  applyParentClosePolicy(engine, run);
  // A run that continues (as new, or as a retry) reports to the parent only when the chain ends.
  if (type !== 'WORKFLOW_EXECUTION_CONTINUED_AS_NEW' && !attrs.newExecutionRunId) notifyParent(engine, run, type, attrs);
  // Time-skipping tests jump days ahead; only the long-running real-clock server forgets old runs.
  if (!engine.clock.timeSkipping) engine.scheduler.after(RETENTION_MS, () => engine.forgetRun(run));
  engine.scheduler.poke();
}

export function terminateRun(engine: Engine, run: Run, reason: string, details: Msg | undefined, identity: string | undefined): void {
  closeRun(engine, run, 'WORKFLOW_EXECUTION_TERMINATED', { reason, details, identity: identity ?? '' });
}

function timeOutRun(engine: Engine, run: Run): void {
  const failure = { message: 'workflow run timed out', timeoutFailureInfo: { timeoutType: 1 } };
  const decision = retryWorkflow(engine, run, failure);
  closeRun(engine, run, 'WORKFLOW_EXECUTION_TIMED_OUT', { retryState: decision.retryState, newExecutionRunId: decision.newRunId });
  decision.startNext?.();
}

/** FailWorkflowExecution: with a retry policy the workflow is retried as a new run of the same execution. */
export function failRun(engine: Engine, run: Run, failure: Msg, completedEventId: number): void {
  const decision = retryWorkflow(engine, run, failure);
  closeRun(engine, run, 'WORKFLOW_EXECUTION_FAILED', {
    failure,
    retryState: decision.retryState,
    workflowTaskCompletedEventId: completedEventId,
    newExecutionRunId: decision.newRunId,
  });
  decision.startNext?.();
}

function retryWorkflow(engine: Engine, run: Run, failure: Msg): { retryState: number; newRunId?: string; startNext?: () => void } {
  const started = run.started;
  const policy = started.retryPolicy;
  if (!policy) return { retryState: RetryState.RETRY_POLICY_NOT_SET! };
  const attempt: number = started.attempt ?? 1;
  const decision = retryDecision(policy, attempt, failure, engine.now(), run.executionExpiry);
  if ('retryState' in decision) return decision;
  const newRunId = randomUUID();
  const startNext = () =>
    createRun(
      engine,
      engine.ns(run.namespace),
      { ...started, namespace: run.namespace, workflowId: run.workflowId, backoffStartInterval: duration(decision.backoffMs), continuedFailure: failure },
      {
        parent: run.parent,
        runId: newRunId,
        firstExecutionRunId: run.firstExecutionRunId,
        continuedExecutionRunId: run.runId,
        executionExpiry: run.executionExpiry,
        attempt: attempt + 1,
        initiator: 2, // RETRY
      },
    );
  return { retryState: RetryState.IN_PROGRESS!, newRunId, startNext };
}

export function signalRun(engine: Engine, run: Run, req: Msg): void {
  if (!run.open) throw workflowCompleted();
  if (req.requestId) {
    if (run.signalRequestIds.has(req.requestId)) return;
    run.signalRequestIds.add(req.requestId);
  }
  deliverEvent(engine, run, () =>
    run.append(
      'WORKFLOW_EXECUTION_SIGNALED',
      { signalName: req.signalName, input: req.input, identity: req.identity ?? '', header: req.header },
      engine.now(),
    ),
  );
}

export function requestCancelRun(engine: Engine, run: Run, req: Msg): void {
  if (!run.open) throw workflowCompleted();
  if (run.cancelRequested) return;
  run.cancelRequested = true;
  deliverEvent(engine, run, () =>
    run.append(
      'WORKFLOW_EXECUTION_CANCEL_REQUESTED',
      {
        cause: req.reason ?? '',
        identity: req.identity ?? '',
        externalInitiatedEventId: req.externalInitiatedEventId,
        externalWorkflowExecution: req.externalWorkflowExecution,
      },
      engine.now(),
    ),
  );
}

export function continueAsNew(engine: Engine, run: Run, a: Msg, completedEventId: number): void {
  const newRunId = randomUUID();
  const workflowType = a.workflowType?.name ? a.workflowType : { name: run.workflowType };
  const taskQueue = a.taskQueue?.name ? a.taskQueue : { name: run.taskQueue, kind: TaskQueueKind.NORMAL };
  const started = run.started;
  const inherited = run.properties; // memo and search attributes in one read of the history
  const workflowRunTimeout = a.workflowRunTimeout ?? started.workflowRunTimeout;
  const workflowTaskTimeout = a.workflowTaskTimeout ?? started.workflowTaskTimeout;
  closeRun(engine, run, 'WORKFLOW_EXECUTION_CONTINUED_AS_NEW', {
    newExecutionRunId: newRunId,
    workflowType,
    taskQueue,
    input: a.input,
    workflowRunTimeout,
    workflowTaskTimeout,
    workflowTaskCompletedEventId: completedEventId,
    backoffStartInterval: a.backoffStartInterval,
    initiator: a.initiator || 1,
    failure: a.failure,
    lastCompletionResult: a.lastCompletionResult,
    header: a.header,
    memo: a.memo,
    searchAttributes: a.searchAttributes,
  });
  const ns = engine.ns(run.namespace);
  createRun(
    engine,
    ns,
    {
      namespace: run.namespace,
      workflowId: run.workflowId,
      workflowType,
      taskQueue,
      input: a.input,
      header: a.header,
      memo: a.memo ?? { fields: inherited.memo },
      searchAttributes: a.searchAttributes ?? { indexedFields: inherited.searchAttributes },
      workflowExecutionTimeout: started.workflowExecutionTimeout,
      workflowRunTimeout,
      workflowTaskTimeout,
      retryPolicy: a.retryPolicy ?? started.retryPolicy,
      backoffStartInterval: a.backoffStartInterval,
      lastCompletionResult: a.lastCompletionResult,
      failure: a.failure,
    },
    {
      parent: run.parent,
      runId: newRunId,
      firstExecutionRunId: run.firstExecutionRunId,
      continuedExecutionRunId: run.runId,
      executionExpiry: run.executionExpiry,
      initiator: 1, // WORKFLOW
    },
  );
}
