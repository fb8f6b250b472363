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
  while (run.open && run.wft !== null && !ctx.cancelled()) {
    await waitForRun(run, () => !run.open || run.wft === null, ctx, 60_000);
  }
  if (ctx.cancelled()) throw new RpcError(status.CANCELLED, 'query cancelled');
  const queryId = randomUUID();
  const queries = pendingOf(engine);
  engine.queriesInFlight++;
  try {
    return await new Promise<Msg>((resolve, reject) => {
      queries.set(queryId, { resolve, reject });
      ctx.onCancel(() => reject(new RpcError(status.CANCELLED, 'query cancelled')));
      engine.queues.offer(run.namespace, 'workflow', run.taskQueue, {
        take: () => {
          if (!queries.has(queryId) || ctx.cancelled()) return null;
          return {
            taskToken: engine.encodeToken({ k: 'q', id: queryId }),
            workflowExecution: run.execution,
            workflowType: { name: run.workflowType },
            previousStartedEventId: run.lastCompletedStartedEventId,
            startedEventId: 0,
            attempt: 1,
            history: { events: run.events.slice() },
            query: req.query,
            workflowExecutionTaskQueue: { name: run.taskQueue, kind: TaskQueueKind.NORMAL },
          };
        },
      });
    });
  } finally {
    queries.delete(queryId);
    engine.queriesInFlight--;
    engine.scheduler.poke();
  }
}

export function respondQueryTaskCompleted(engine: Engine, req: Msg): Msg {
  const token = engine.decodeToken(req.taskToken);
  const query = token.k === 'q' ? pendingOf(engine).get(token.id) : undefined;
  if (!query) throw notFound('query task not found, or already expired');
  if (req.completedType === QueryResultType.ANSWERED) {
    query.resolve({ queryResult: req.queryResult ?? { payloads: [] } });
  } else {
    query.reject(
      new RpcError(status.INVALID_ARGUMENT, req.errorMessage || req.failure?.message || 'query failed', {
        type: 'temporal.api.errordetails.v1.QueryFailedFailure',
        value: { failure: req.failure },
      }),
    );
  }
  return {};
}
