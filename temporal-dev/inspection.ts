// Read-side RPCs: history (with long poll), describe, list and count.
import type { Engine } from './engine';
import { invalidArgument } from './errors';
import { HistoryEventFilterType, PendingActivityState, timestamp, WorkflowStatus, type Msg } from './proto';
import { waitForRun } from './queries';
import type { Run } from './run';
import { LONG_POLL_MS, type PollContext } from './task-queues';
import { executionInfo, parseQuery } from './visibility';

export async function getHistory(engine: Engine, req: Msg, ctx: PollContext): Promise<Msg> {
  const token = req.nextPageToken?.length ? engine.decodeToken(req.nextPageToken) : {};
  const execution = token.r ? { workflowId: req.execution?.workflowId, runId: token.r } : req.execution;
  const run = engine.findRun(req.namespace, execution);
  const pageToken = (next: number) => engine.encodeToken({ r: run.runId, n: next });
  if (req.historyEventFilterType === HistoryEventFilterType.CLOSE_EVENT) {
    if (req.waitNewEvent && run.open) await waitForRun(run, () => !run.open, ctx, LONG_POLL_MS);
    if (run.open) return { history: { events: [] }, nextPageToken: req.waitNewEvent ? pageToken(0) : undefined };
    return { history: { events: [run.lastEvent()] } };
  }
  const start: number = token.n ?? 0;
  if (req.waitNewEvent && run.open && start >= run.eventCount) {
    await waitForRun(run, () => run.eventCount > start || !run.open, ctx, LONG_POLL_MS);
  }
  const pageSize = req.maximumPageSize > 0 ? req.maximumPageSize : 1000;
  const events = run.eventsBetween(start, start + pageSize);
  const end = start + events.length;
  const more = end < run.eventCount || (req.waitNewEvent && run.open);
  return { history: { events }, nextPageToken: more ? pageToken(end) : undefined };
}

function pendingActivities(run: Run): Msg[] {
  return [...run.pendingActivities.values()].map((act) => ({
    activityId: act.attrs.activityId,
    activityType: act.attrs.activityType,
    state: act.cancelRequested
      ? PendingActivityState.CANCEL_REQUESTED
      : act.state === 'started'
        ? PendingActivityState.STARTED
        : PendingActivityState.SCHEDULED,
    heartbeatDetails: act.heartbeatDetails,
    lastHeartbeatTime: act.lastHeartbeatTime ? timestamp(act.lastHeartbeatTime) : undefined,
    lastStartedTime: act.startedTime ? timestamp(act.startedTime) : undefined,
    attempt: act.attempt,
    maximumAttempts: act.attrs.retryPolicy.maximumAttempts,
    scheduledTime: timestamp(act.scheduledTime),
    lastFailure: act.lastFailure,
    lastWorkerIdentity: act.startedIdentity,
    nextAttemptScheduleTime: act.state === 'backoff' ? timestamp(act.nextAttemptAt) : undefined,
  }));
}

export function describeWorkflow(engine: Engine, req: Msg): Msg {
  const run = engine.findRun(req.namespace, req.execution);
  const wft = run.wft;
  const started = run.started;
  return {
    executionConfig: {
      taskQueue: { name: run.taskQueue, kind: 1 },
      workflowExecutionTimeout: started.workflowExecutionTimeout,
      workflowRunTimeout: started.workflowRunTimeout,
      defaultWorkflowTaskTimeout: started.workflowTaskTimeout,
    },
    workflowExecutionInfo: executionInfo(run),
    pendingActivities: pendingActivities(run),
    pendingChildren: [...run.pendingChildren.values()].map((c) => ({
      workflowId: c.workflowId,
      runId: c.runId,
      workflowTypeName: c.workflowType,
      initiatedId: c.initiatedEventId,
      parentClosePolicy: c.parentClosePolicy,
    })),
    pendingWorkflowTask: wft
      ? {
          state: wft.startedEventId ? 2 : 1,
          scheduledTime: timestamp(wft.scheduledTime),
          startedTime: wft.startedEventId ? timestamp(wft.startedTime) : undefined,
          attempt: wft.attempt,
        }
      : undefined,
  };
}

function matchingRuns(engine: Engine, namespace: string, query: string | undefined): Run[] {
  const predicate = parseQuery(query);
  const out: Run[] = [];
  for (const run of engine.ns(namespace).runs.values()) if (predicate(run)) out.push(run);
  return out.reverse(); // newest first
}

export function listWorkflows(engine: Engine, req: Msg): Msg {
  const offset: number = req.nextPageToken?.length ? (engine.decodeToken(req.nextPageToken).o ?? 0) : 0;
  const pageSize = req.pageSize > 0 ? req.pageSize : 1000;
  const runs = matchingRuns(engine, req.namespace, req.query);
  const page = runs.slice(offset, offset + pageSize);
  const next = offset + page.length;
  return {
    executions: page.map(executionInfo),
    nextPageToken: next < runs.length ? engine.encodeToken({ o: next }) : undefined,
  };
}

const GROUP_BY = /\bgroup\s+by\s+(\w+)\s*$/i;

export function countWorkflows(engine: Engine, req: Msg): Msg {
  const query: string = req.query ?? '';
  const group = GROUP_BY.exec(query);
  const runs = matchingRuns(engine, req.namespace, query.replace(GROUP_BY, ''));
  if (!group) return { count: runs.length };
  if (group[1] !== 'ExecutionStatus') throw invalidArgument('invalid query: GROUP BY is supported for ExecutionStatus only');
  const counts = new Map<number, number>();
  for (const run of runs) counts.set(run.status, (counts.get(run.status) ?? 0) + 1);
  const names = Object.fromEntries(Object.entries(WorkflowStatus).map(([k, v]) => [v, k]));
  return {
    count: runs.length,
    groups: [...counts].map(([s, count]) => ({
      groupValues: [{ metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from(JSON.stringify(pascal(names[s]!))) }],
      count,
    })),
  };
}

function pascal(name: string): string {
  return name.toLowerCase().replace(/(^|_)([a-z])/g, (_, __, c: string) => c.toUpperCase());
}
