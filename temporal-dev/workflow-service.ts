// temporal.api.workflowservice.v1.WorkflowService: one thin handler per RPC, delegating to the feature modules.
// RPCs not listed here answer UNIMPLEMENTED (see grpc-server.ts), and GetSystemInfo says what is supported.
import { status } from '@grpc/grpc-js';
import {
  cancelActivity,
  completeActivity,
  failActivity,
  heartbeatActivity,
  locateActivity,
} from './activities';
import type { Engine } from './engine';
import { invalidArgument, notFound, RpcError, workflowCompleted } from './errors';
import { requestCancelRun, signalRun, startWorkflow, terminateRun } from './executions';
import { countWorkflows, describeWorkflow, getHistory, listWorkflows } from './inspection';
import { searchAttributeKeys } from './operator-service';
import { duration, TaskQueueKind, TaskQueueType, timestamp, type Msg } from './proto';
import { queryWorkflow, respondQueryTaskCompleted } from './queries';
import { searchAttributesSizeRefusal } from './search-attribute-limits';
import type { PollContext } from './task-queues';
import { pollUpdate, updateWorkflow } from './updates';
import { completeWorkflowTask, failWorkflowTask, nestedWorkflowTask } from './workflow-tasks';

export type Handler = (req: Msg, ctx: PollContext) => Msg | Promise<Msg>;

const SERVER_VERSION = '1.24.0-herald-temporal-dev';

function namespaceInfo(engine: Engine, name: string): Msg {
  const ns = engine.ns(name);
  return {
    namespaceInfo: { name: ns.name, state: 1, id: ns.id, description: 'in-memory namespace of temporal-dev' },
    config: { workflowExecutionRetentionTtl: duration(24 * 3600 * 1000), historyArchivalState: 2, visibilityArchivalState: 2 },
    isGlobalNamespace: false,
  };
}

/** As the real frontend, before anything else of a start: even a start that would use the running workflow is refused. */
function checkSearchAttributesSize(req: Msg): void {
  const refusal = searchAttributesSizeRefusal(req.searchAttributes?.indexedFields);
  if (refusal) throw invalidArgument(refusal);
}

function startResponse(run: { runId: string; status: number }, started: boolean, eagerWorkflowTask?: Msg): Msg {
  return { runId: run.runId, started, status: run.status, eagerWorkflowTask: eagerWorkflowTask && nestedWorkflowTask(eagerWorkflowTask) };
}

export function workflowServiceHandlers(engine: Engine): Record<string, Handler> {
  const activity = (fn: (e: Engine, located: ReturnType<typeof locateActivity>, req: Msg) => Msg): Handler => {
    return (req) => fn(engine, locateActivity(engine, req), req);
  };
  return {
    GetSystemInfo: () => ({
      serverVersion: SERVER_VERSION,
      capabilities: {
        signalAndQueryHeader: true,
        internalErrorDifferentiation: true,
        activityFailureIncludeHeartbeat: true,
        supportsSchedules: false,
        encodedFailureAttributes: true,
        buildIdBasedVersioning: false,
        upsertMemo: true,
        eagerWorkflowStart: true,
        sdkMetadata: true,
        countGroupByExecutionStatus: true,
        nexus: false,
      },
    }),
    GetClusterInfo: () => ({
      supportedClients: {},
      serverVersion: SERVER_VERSION,
      clusterId: 'temporal-dev',
      clusterName: 'active',
      historyShardCount: 1,
      persistenceStore: 'memory',
      visibilityStore: 'memory',
    }),
    DescribeNamespace: (req) => {
      if (!req.namespace && req.id) {
        const ns = [...engine.namespaces.values()].find((n) => n.id === req.id);
        if (!ns) throw notFound(`Namespace ${req.id} is not found.`);
        return namespaceInfo(engine, ns.name);
      }
      return namespaceInfo(engine, req.namespace);
    },
    ListNamespaces: () => ({ namespaces: [...engine.namespaces.keys()].map((n) => namespaceInfo(engine, n)) }),
    RegisterNamespace: (req) => {
      if (engine.namespaces.has(req.namespace)) throw new RpcError(status.ALREADY_EXISTS, 'Namespace already exists.');
      engine.registerNamespace(req.namespace);
      return {};
    },
    GetSearchAttributes: (req) => ({ keys: searchAttributeKeys(engine, req.namespace) }),

    StartWorkflowExecution: (req) => {
      checkSearchAttributesSize(req);
      const { run, started, eagerWorkflowTask } = startWorkflow(engine, req, {}, { allowEager: true });
      return startResponse(run, started, eagerWorkflowTask);
    },
    SignalWithStartWorkflowExecution: (req) => {
      checkSearchAttributesSize(req);
      const current = engine.currentRun(engine.ns(req.namespace).name, req.workflowId);
      const signal = { signalName: req.signalName, input: req.signalInput, header: req.header, identity: req.identity };
      if (current?.open) {
        signalRun(engine, current, signal);
        return { runId: current.runId, started: false };
      }
      const { run } = startWorkflow(engine, req);
      signalRun(engine, run, signal);
      return { runId: run.runId, started: true };
    },
    SignalWorkflowExecution: (req) => {
      signalRun(engine, engine.findRun(req.namespace, req.workflowExecution), req);
      return {};
    },
    RequestCancelWorkflowExecution: (req) => {
      requestCancelRun(engine, engine.findRun(req.namespace, req.workflowExecution), req);
      return {};
    },
    TerminateWorkflowExecution: (req) => {
      const run = engine.findRun(req.namespace, req.workflowExecution);
      if (!run.open) throw workflowCompleted();
      terminateRun(engine, run, req.reason ?? '', req.details, req.identity);
      return {};
    },
    DescribeWorkflowExecution: (req) => describeWorkflow(engine, req),
    GetWorkflowExecutionHistory: (req, ctx) => getHistory(engine, req, ctx),
    GetWorkflowExecutionHistoryReverse: (req) => {
      const run = engine.findRun(req.namespace, req.execution);
      return { history: { events: run.events.reverse() } };
    },
    ListWorkflowExecutions: (req) => listWorkflows(engine, req),
    ScanWorkflowExecutions: (req) => listWorkflows(engine, req),
    CountWorkflowExecutions: (req) => countWorkflows(engine, req),
    DescribeTaskQueue: (req) => {
      engine.ns(req.namespace);
      const kind = req.taskQueueType === TaskQueueType.ACTIVITY ? 'activity' : 'workflow';
      const pollers = engine.queues.pollers(req.namespace, kind, req.taskQueue?.name ?? '');
      return { pollers: pollers.map((p) => ({ identity: p.identity, lastAccessTime: timestamp(p.lastAccessTime), ratePerSecond: 100_000 })) };
    },

    PollWorkflowTaskQueue: async (req, ctx) => {
      engine.ns(req.namespace);
      // Sticky queues are accepted but never used: every task goes to the normal queue with full history.
      const sticky = req.taskQueue?.kind === TaskQueueKind.STICKY;
      const poll = { identity: req.identity ?? '' };
      return (await engine.queues.poll(req.namespace, 'workflow', req.taskQueue?.name ?? '', poll, ctx, sticky)) ?? {};
    },
    RespondWorkflowTaskCompleted: (req) => completeWorkflowTask(engine, req),
    RespondWorkflowTaskFailed: (req) => failWorkflowTask(engine, req),
    PollActivityTaskQueue: async (req, ctx) => {
      engine.ns(req.namespace);
      const poll = { identity: req.identity ?? '' };
      return (await engine.queues.poll(req.namespace, 'activity', req.taskQueue?.name ?? '', poll, ctx)) ?? {};
    },
    RecordActivityTaskHeartbeat: activity(heartbeatActivity),
    RecordActivityTaskHeartbeatById: activity(heartbeatActivity),
    RespondActivityTaskCompleted: activity(completeActivity),
    RespondActivityTaskCompletedById: activity(completeActivity),
    RespondActivityTaskFailed: activity(failActivity),
    RespondActivityTaskFailedById: activity(failActivity),
    RespondActivityTaskCanceled: activity(cancelActivity),
    RespondActivityTaskCanceledById: activity(cancelActivity),
    ResetStickyTaskQueue: () => ({}),
    ShutdownWorker: () => ({}),

    QueryWorkflow: (req, ctx) => queryWorkflow(engine, req, ctx),
    RespondQueryTaskCompleted: (req) => respondQueryTaskCompleted(engine, req),
    UpdateWorkflowExecution: (req, ctx) => {
      const run = engine.findRun(req.namespace, req.workflowExecution);
      if (req.firstExecutionRunId && run.firstExecutionRunId !== req.firstExecutionRunId) {
        throw notFound(`workflow not found for ID: ${run.workflowId}`);
      }
      return updateWorkflow(engine, run, req, ctx);
    },
    PollWorkflowExecutionUpdate: (req, ctx) => pollUpdate(engine, req, ctx),
    ExecuteMultiOperation: async (req, ctx) => {
      const [startOp, updateOp] = req.operations ?? [];
      if (!startOp?.startWorkflow || !updateOp?.updateWorkflow) {
        throw new RpcError(status.INVALID_ARGUMENT, 'ExecuteMultiOperation supports exactly [startWorkflow, updateWorkflow]');
      }
      checkSearchAttributesSize(startOp.startWorkflow);
      const { run, started } = startWorkflow(engine, startOp.startWorkflow);
      const update = await updateWorkflow(engine, run, updateOp.updateWorkflow, ctx);
      return { responses: [{ startWorkflow: startResponse(run, started) }, { updateWorkflow: update }] };
    },
  };
}
