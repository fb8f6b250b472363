// Activity tasks: scheduling, dispatch to pollers, heartbeats, completion, retries with backoff, the four
// timeouts and cancellation. As on the real server, retries leave no trace in history: ActivityTaskStarted is
// written only together with the final outcome.
import type { Engine } from './engine';
import { notFound, workflowCompleted } from './errors';
import { duration, durationMs, RetryState, timestamp, TimeoutType, type Msg } from './proto';
import type { Run } from './run';
import type { ActivityState } from './run-state';
import { normaliseRetryPolicy, retryDecision } from './retry-policy';
import type { PollRequest } from './task-queues';
import { deliverEvent } from './workflow-tasks';

const TIMEOUT_NAMES: Record<number, string> = {
  [TimeoutType.START_TO_CLOSE!]: 'StartToClose',
  [TimeoutType.SCHEDULE_TO_START!]: 'ScheduleToStart',
  [TimeoutType.SCHEDULE_TO_CLOSE!]: 'ScheduleToClose',
  [TimeoutType.HEARTBEAT!]: 'Heartbeat',
};

/**
 * Schedules an activity. With `eager` (the completing worker asked for eager execution and polls the activity's
 * task queue), the task is started for that worker at once and returned, to go out in the completion response as
 * the real server does; otherwise it is queued for pollers and null is returned.
 */
export function scheduleActivity(engine: Engine, run: Run, a: Msg, completedEventId: number, eager?: PollRequest): Msg | null {
  const now = engine.now();
  const scheduleToClose = durationMs(a.scheduleToCloseTimeout);
  const startToClose = durationMs(a.startToCloseTimeout) || scheduleToClose;
  const scheduleToStart = durationMs(a.scheduleToStartTimeout) || scheduleToClose;
  const attrs: Msg = {
    activityId: a.activityId,
    activityType: a.activityType,
    taskQueue: a.taskQueue?.name ? a.taskQueue : { name: run.taskQueue, kind: 1 },
    header: a.header,
    input: a.input,
    // Always present (0 = none), as the real server fills them in; the SDK requires them.
    scheduleToCloseTimeout: duration(scheduleToClose),
    scheduleToStartTimeout: duration(scheduleToStart),
    startToCloseTimeout: duration(startToClose),
    heartbeatTimeout: duration(durationMs(a.heartbeatTimeout)),
    workflowTaskCompletedEventId: completedEventId,
    retryPolicy: normaliseRetryPolicy(a.retryPolicy),
    priority: a.priority,
  };
  const scheduledEventId = run.append('ACTIVITY_TASK_SCHEDULED', attrs, now);
  const act: ActivityState = {
    scheduledEventId,
    attrs,
    attempt: 1,
    state: 'scheduled',
    scheduledTime: now,
    attemptScheduledTime: now,
    startedTime: 0,
    startedIdentity: '',
    startedRequestId: '',
    lastHeartbeatTime: 0,
    cancelRequested: false,
    cancelRequestedEventId: 0,
    deadlines: [],
    nextAttemptAt: 0,
  };
  run.activities.set(scheduledEventId, act);
  if (scheduleToClose) {
    act.scheduleToClose = engine.scheduler.after(scheduleToClose, () => timeOut(engine, run, act, TimeoutType.SCHEDULE_TO_CLOSE!));
  }
  if (eager && attrs.taskQueue.name === run.taskQueue) {
    markQueued(engine, run, act);
    const task = take(engine, run, act, act.attempt, eager);
    if (task) return task;
  }
  enqueue(engine, run, act);
  return null;
}

function markQueued(engine: Engine, run: Run, act: ActivityState): void {
  act.state = 'scheduled';
  act.attemptScheduledTime = engine.now();
  clearDeadlines(act);
  engine.liveActivities.set(act, { run, queuedAt: Date.now() });
}

function enqueue(engine: Engine, run: Run, act: ActivityState): void {
  if (!run.open || run.pendingActivities.get(act.scheduledEventId) !== act) return;
  markQueued(engine, run, act);
  const scheduleToStart = durationMs(act.attrs.scheduleToStartTimeout);
  if (scheduleToStart) {
    act.deadlines.push(engine.scheduler.after(scheduleToStart, () => timeOut(engine, run, act, TimeoutType.SCHEDULE_TO_START!)));
  }
  const attempt = act.attempt;
  engine.queues.offer(run.namespace, 'activity', act.attrs.taskQueue.name, {
    take: (poll) => take(engine, run, act, attempt, poll),
  });
}

function take(engine: Engine, run: Run, act: ActivityState, attempt: number, poll: PollRequest): Msg | null {
  if (!run.open || run.pendingActivities.get(act.scheduledEventId) !== act || act.state !== 'scheduled' || act.attempt !== attempt) {
    return null;
  }
  const now = engine.now();
  clearDeadlines(act);
  act.state = 'started';
  act.startedTime = now;
  act.startedIdentity = poll.identity;
  act.startedRequestId = poll.requestId ?? '';
  act.deadlines.push(
    engine.scheduler.after(durationMs(act.attrs.startToCloseTimeout), () => timeOut(engine, run, act, TimeoutType.START_TO_CLOSE!)),
  );
  armHeartbeat(engine, run, act);
  const a = act.attrs;
  return {
    taskToken: engine.encodeToken({ k: 'a', ns: run.namespace, r: run.runId, s: act.scheduledEventId, a: attempt }),
    workflowNamespace: run.namespace,
    workflowType: { name: run.workflowType },
    workflowExecution: run.execution,
    activityType: a.activityType,
    activityId: a.activityId,
    header: a.header,
    input: a.input,
    heartbeatDetails: act.heartbeatDetails,
    scheduledTime: timestamp(act.scheduledTime),
    currentAttemptScheduledTime: timestamp(act.attemptScheduledTime),
    startedTime: timestamp(now),
    attempt,
    scheduleToCloseTimeout: a.scheduleToCloseTimeout,
    startToCloseTimeout: a.startToCloseTimeout,
    heartbeatTimeout: a.heartbeatTimeout,
    retryPolicy: a.retryPolicy,
    priority: a.priority,
  };
}

function armHeartbeat(engine: Engine, run: Run, act: ActivityState): void {
  const heartbeat = durationMs(act.attrs.heartbeatTimeout);
  if (!heartbeat) return;
  const attempt = act.attempt;
  const at = engine.now() + heartbeat;
  act.deadlines.push(
    engine.scheduler.at(at, () => {
      if (act.attempt === attempt && act.lastHeartbeatTime + heartbeat <= engine.now()) timeOut(engine, run, act, TimeoutType.HEARTBEAT!);
    }),
  );
}

function clearDeadlines(act: ActivityState): void {
  for (const d of act.deadlines) d.cancel();
  act.deadlines = [];
}

/** Writes the final outcome: ActivityTaskStarted (if this attempt started) followed by the closing event. */
function finish(engine: Engine, run: Run, act: ActivityState, type: string, attrs: Msg): void {
  clearDeadlines(act);
  act.scheduleToClose?.cancel();
  run.activities.delete(act.scheduledEventId);
  engine.liveActivities.delete(act);
  const wasStarted = act.state === 'started';
  deliverEvent(engine, run, () => {
    const now = engine.now();
    let startedEventId = 0;
    if (wasStarted) {
      startedEventId = run.append(
        'ACTIVITY_TASK_STARTED',
        {
          scheduledEventId: act.scheduledEventId,
          identity: act.startedIdentity,
          requestId: act.startedRequestId,
          attempt: act.attempt,
          lastFailure: act.lastFailure,
        },
        now,
      );
    }
    run.append(type, { ...attrs, scheduledEventId: act.scheduledEventId, startedEventId }, now);
  });
}

function retryOrFinish(engine: Engine, run: Run, act: ActivityState, failure: Msg, finalType: string, finalAttrs: Msg): void {
  const scheduleToClose = durationMs(act.attrs.scheduleToCloseTimeout);
  const deadline = scheduleToClose ? act.scheduledTime + scheduleToClose : 0;
  const decision = retryDecision(act.attrs.retryPolicy, act.attempt, failure, engine.now(), deadline);
  if ('retryState' in decision) {
    finish(engine, run, act, finalType, { ...finalAttrs, retryState: decision.retryState });
    return;
  }
  clearDeadlines(act);
  engine.liveActivities.delete(act);
  act.state = 'backoff';
  act.lastFailure = failure;
  act.attempt++;
  act.nextAttemptAt = engine.now() + decision.backoffMs;
  act.deadlines.push(engine.scheduler.after(decision.backoffMs, () => enqueue(engine, run, act)));
}

function timeOut(engine: Engine, run: Run, act: ActivityState, timeoutType: number): void {
  if (!run.open || run.pendingActivities.get(act.scheduledEventId) !== act) return;
  const failure: Msg = {
    message: `activity ${TIMEOUT_NAMES[timeoutType]} timeout`,
    source: 'Server',
    timeoutFailureInfo: { timeoutType, lastHeartbeatDetails: act.heartbeatDetails },
  };
  if (timeoutType === TimeoutType.START_TO_CLOSE || timeoutType === TimeoutType.HEARTBEAT) {
    retryOrFinish(engine, run, act, failure, 'ACTIVITY_TASK_TIMED_OUT', { failure });
    return;
  }
  if (act.lastFailure) failure.cause = act.lastFailure;
  finish(engine, run, act, 'ACTIVITY_TASK_TIMED_OUT', { failure, retryState: RetryState.TIMEOUT });
}

/** ActivityTaskCancelRequested; returns true when the activity was cancelled at once (it was not running). */
export function requestCancelActivity(engine: Engine, run: Run, a: Msg, completedEventId: number): boolean {
  const scheduledEventId: number = a.scheduledEventId;
  const requestedId = run.append(
    'ACTIVITY_TASK_CANCEL_REQUESTED',
    { scheduledEventId, workflowTaskCompletedEventId: completedEventId },
    engine.now(),
  );
  const act = run.pendingActivities.get(scheduledEventId);
  if (!act) return false;
  act.cancelRequested = true;
  act.cancelRequestedEventId = requestedId;
  if (act.state === 'started') return false;
  clearDeadlines(act);
  act.scheduleToClose?.cancel();
  run.activities.delete(scheduledEventId);
  engine.liveActivities.delete(act);
  run.append(
    'ACTIVITY_TASK_CANCELED',
    { scheduledEventId, startedEventId: 0, latestCancelRequestedEventId: requestedId, identity: '' },
    engine.now(),
  );
  return true;
}

type Located = { run: Run; act: ActivityState };

function byToken(engine: Engine, taskToken: Uint8Array): Located {
  const t = engine.decodeToken(taskToken);
  const run = t.k === 'a' ? engine.namespaces.get(t.ns)?.runs.get(t.r) : undefined;
  if (run && !run.open) throw workflowCompleted();
  const act = run?.pendingActivities.get(t.s);
  if (!run || !act || act.attempt !== t.a || act.state !== 'started') throw notFound('Activity task not found.');
  return { run, act };
}

function byId(engine: Engine, req: Msg): Located {
  const run = engine.findRun(req.namespace, { workflowId: req.workflowId, runId: req.runId });
  if (!run.open) throw workflowCompleted();
  for (const act of run.pendingActivities.values()) {
    if (act.attrs.activityId === req.activityId && act.state === 'started') return { run, act };
  }
  throw notFound('Activity task not found.');
}

export function locateActivity(engine: Engine, req: Msg): Located {
  return req.taskToken?.length ? byToken(engine, req.taskToken) : byId(engine, req);
}

export function completeActivity(engine: Engine, { run, act }: Located, req: Msg): Msg {
  finish(engine, run, act, 'ACTIVITY_TASK_COMPLETED', { result: req.result, identity: req.identity ?? '' });
  return {};
}

export function failActivity(engine: Engine, { run, act }: Located, req: Msg): Msg {
  if (req.lastHeartbeatDetails) act.heartbeatDetails = req.lastHeartbeatDetails;
  const failure: Msg = req.failure ?? { message: 'activity failed' };
  retryOrFinish(engine, run, act, failure, 'ACTIVITY_TASK_FAILED', { failure, identity: req.identity ?? '' });
  return { failures: [] };
}

export function cancelActivity(engine: Engine, { run, act }: Located, req: Msg): Msg {
  finish(engine, run, act, 'ACTIVITY_TASK_CANCELED', {
    details: req.details,
    latestCancelRequestedEventId: act.cancelRequestedEventId,
    identity: req.identity ?? '',
  });
  return {};
}

export function heartbeatActivity(engine: Engine, { run, act }: Located, req: Msg): Msg {
  if (req.details) act.heartbeatDetails = req.details;
  act.lastHeartbeatTime = engine.now();
  const attempt = act.attempt;
  // Keep only the start-to-close deadline and re-arm the heartbeat one.
  const [startToClose, ...rest] = act.deadlines;
  for (const d of rest) d.cancel();
  act.deadlines = startToClose ? [startToClose] : [];
  if (act.attempt === attempt) armHeartbeat(engine, run, act);
  return { cancelRequested: act.cancelRequested, activityPaused: false, activityReset: false };
}

/** When a run closes its pending activities go with it; later calls from workers get NOT_FOUND. */
export function dropActivities(engine: Engine, run: Run): void {
  for (const act of run.pendingActivities.values()) {
    clearDeadlines(act);
    act.scheduleToClose?.cancel();
    engine.liveActivities.delete(act);
  }
  if (run.pendingActivities.size) run.activities.clear();
}
