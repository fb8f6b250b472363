// Queries as legacy query tasks: the query rides to a worker on the workflow's task queue together with the full
// history; the worker answers with RespondQueryTaskCompleted. A query waits while a workflow task is outstanding,
// so the worker always answers from a consistent state.
import { randomUUID } from 'node:crypto';
import type { Engine } from './engine';
import { notFound, RpcError } from './errors';
import { status } from '@grpc/grpc-js';
import { QueryRejectCondition, QueryResultType, TaskQueueKind, WorkflowStatus, type Msg } from './proto';
import type { Run } from './run';
import type { PollContext } from './task-queues';

interface PendingQuery {
  run: Run;
  query: Msg;
  ctx: PollContext;
  resolve(response: Msg): void;
  reject(err: Error): void;
}

const pending = new WeakMap<Engine, Map<string, PendingQuery>>();
function pendingOf(engine: Engine): Map<string, PendingQuery> {
  let map = pending.get(engine);
  if (!map) {
    map = new Map();
    pending.set(engine, map);
  }
  return map;
}

/** Resolves when `ready()` holds, re-checking on every history event; gives up on cancel or after `timeoutMs`. */
export function waitForRun(run: Run, ready: () => boolean, ctx: PollContext, timeoutMs: number): Promise<void> {
  if (ready()) return Promise.resolve();
  return new Promise((resolve) => {
    const finish = () => {
      clearTimeout(timer);
      run.listeners.delete(check);
      resolve();
    };
    const check = () => {
      if (ready()) finish();
    };
    const timer = setTimeout(finish, timeoutMs);
    run.listeners.add(check);
    ctx.onCancel(finish);
  });
}

export async function queryWorkflow(engine: Engine, req: Msg, ctx: PollContext): Promise<Msg> {
  const run = engine.findRun(req.namespace, req.execution);
  const condition = req.queryRejectCondition ?? 0;
  if (
    (condition === QueryRejectCondition.NOT_OPEN && !run.open) ||
    (condition === QueryRejectCondition.NOT_COMPLETED_CLEANLY && !run.open && run.status !== WorkflowStatus.COMPLETED)
  ) {
    return { queryRejected: { status: run.status } };
  }
  while (run.open && run.wftRunning && !ctx.cancelled()) {
    await waitForRun(run, () => !run.open || !run.wftRunning, ctx, 60_000);
  }
  if (ctx.cancelled()) throw new RpcError(status.CANCELLED, 'query cancelled');
  const queryId = randomUUID();
  const queries = pendingOf(engine);
  engine.queriesInFlight++;
  try {
    return await new Promise<Msg>((resolve, reject) => {
      queries.set(queryId, { run, query: req.query, ctx, resolve, reject });
      ctx.onCancel(() => reject(new RpcError(status.CANCELLED, 'query cancelled')));
      // A scheduled workflow task takes the query along (answered in its completion); otherwise a query task.
      if (run.open && run.wft) run.attachedQueries.add(queryId);
      else dispatchQueryTask(engine, queryId);
    });
  } finally {
    queries.delete(queryId);
    run.attachedQueries.delete(queryId);
    engine.queriesInFlight--;
    engine.scheduler.poke();
  }
}

/** The `queries` map of a workflow task: every query waiting for this run's next task. */
export function attachedQueries(engine: Engine, run: Run): Record<string, Msg> {
  const out: Record<string, Msg> = {};
  for (const id of run.attachedQueries) {
    const q = pendingOf(engine).get(id);
    if (q) out[id] = q.query;
  }
  return out;
}

/** Answers from a workflow task completion; unanswered queries stay attached (see redispatchAttached). */
export function answerAttachedQueries(engine: Engine, run: Run, results: Record<string, Msg>): void {
  const queries = pendingOf(engine);
  for (const [id, result] of Object.entries(results)) {
    const q = queries.get(id);
    if (!q) continue;
    run.attachedQueries.delete(id);
    settle(q, result.resultType ?? 0, result.answer, result.errorMessage, result.failure);
  }
}

/** Without a workflow task to ride on (none scheduled, or the run closed), attached queries become query tasks. */
export function redispatchAttached(engine: Engine, run: Run): void {
  const ids = [...run.attachedQueries];
  run.attachedQueries.clear();
  for (const id of ids) dispatchQueryTask(engine, id);
}

function dispatchQueryTask(engine: Engine, queryId: string): void {
  const queries = pendingOf(engine);
  const q = queries.get(queryId);
  if (!q) return;
  const { run } = q;
  engine.queues.offer(run.namespace, 'workflow', run.taskQueue, {
    take: () => {
      if (!queries.has(queryId) || q.ctx.cancelled()) return null;
      return {
        taskToken: engine.encodeToken({ k: 'q', id: queryId }),
        workflowExecution: run.execution,
        workflowType: { name: run.workflowType },
        previousStartedEventId: run.lastCompletedStartedEventId,
        startedEventId: 0,
        attempt: 1,
        history: { events: run.events },
        query: q.query,
        workflowExecutionTaskQueue: { name: run.taskQueue, kind: TaskQueueKind.NORMAL },
      };
    },
  });
}

function settle(q: PendingQuery, resultType: number, answer: Msg | undefined, errorMessage: string | undefined, failure: Msg | undefined) {
  if (resultType === QueryResultType.ANSWERED) {
    q.resolve({ queryResult: answer ?? { payloads: [] } });
  } else {
    q.reject(
      new RpcError(status.INVALID_ARGUMENT, errorMessage || failure?.message || 'query failed', {
        type: 'temporal.api.errordetails.v1.QueryFailedFailure',
        value: { failure },
      }),
    );
  }
}

export function respondQueryTaskCompleted(engine: Engine, req: Msg): Msg {
  const token = engine.decodeToken(req.taskToken);
  const query = token.k === 'q' ? pendingOf(engine).get(token.id) : undefined;
  if (!query) throw notFound('query task not found, or already expired');
  settle(query, req.completedType ?? 0, req.queryResult, req.errorMessage, req.failure);
  return {};
}
