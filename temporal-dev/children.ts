// Child workflows (start, completion reported to the parent, parent-close policy) and the two commands that
// reach another workflow: signal-external and request-cancel-external.
import type { Engine } from './engine';
import { requestCancelRun, signalRun, startWorkflow, terminateRun } from './executions';
import { ParentClosePolicy, ReusePolicy, type Msg } from './proto';
import type { Run } from './run';
import type { ChildState } from './run-state';
import { deliverEvent } from './workflow-tasks';

export function initiateChild(engine: Engine, run: Run, a: Msg, completedEventId: number): () => void {
  const namespace: string = a.namespace || run.namespace;
  const initiatedEventId = run.append(
    'START_CHILD_WORKFLOW_EXECUTION_INITIATED',
    {
      namespace,
      workflowId: a.workflowId,
      workflowType: a.workflowType,
      taskQueue: a.taskQueue?.name ? a.taskQueue : { name: run.taskQueue, kind: 1 },
      input: a.input,
      workflowExecutionTimeout: a.workflowExecutionTimeout,
      workflowRunTimeout: a.workflowRunTimeout,
      workflowTaskTimeout: a.workflowTaskTimeout,
      parentClosePolicy: a.parentClosePolicy,
      control: a.control,
      workflowTaskCompletedEventId: completedEventId,
      workflowIdReusePolicy: a.workflowIdReusePolicy,
      retryPolicy: a.retryPolicy,
      cronSchedule: a.cronSchedule,
      header: a.header,
      memo: a.memo,
      searchAttributes: a.searchAttributes,
      priority: a.priority,
    },
    engine.now(),
  );
  const child: ChildState = {
    initiatedEventId,
    namespace,
    workflowId: a.workflowId,
    workflowType: a.workflowType?.name ?? '',
    runId: '',
    startedEventId: 0,
    parentClosePolicy: a.parentClosePolicy || ParentClosePolicy.TERMINATE!,
  };
  run.children.set(initiatedEventId, child);
  return () => {
    if (!run.open) return;
    try {
      const { run: childRun } = startWorkflow(
        engine,
        {
          ...a,
          namespace,
          taskQueue: a.taskQueue?.name ? a.taskQueue : { name: run.taskQueue },
          workflowIdReusePolicy: a.workflowIdReusePolicy || ReusePolicy.ALLOW_DUPLICATE,
          requestId: `${run.runId}:${initiatedEventId}`,
        },
        { parent: { namespace: run.namespace, workflowId: run.workflowId, runId: run.runId, initiatedEventId } },
      );
      child.runId = childRun.runId;
      deliverEvent(engine, run, () => {
        child.startedEventId = run.append(
          'CHILD_WORKFLOW_EXECUTION_STARTED',
          { namespace, initiatedEventId, workflowExecution: childRun.execution, workflowType: a.workflowType, header: a.header },
          engine.now(),
        );
      });
    } catch {
      run.children.delete(initiatedEventId);
      deliverEvent(engine, run, () =>
        run.append(
          'START_CHILD_WORKFLOW_EXECUTION_FAILED',
          {
            namespace,
            workflowId: a.workflowId,
            workflowType: a.workflowType,
            cause: 1, // WORKFLOW_ALREADY_EXISTS
            control: a.control,
            initiatedEventId,
            workflowTaskCompletedEventId: completedEventId,
          },
          engine.now(),
        ),
      );
    }
  };
}

const CHILD_EVENTS: Record<string, { type: string; fields: string[] }> = {
  WORKFLOW_EXECUTION_COMPLETED: { type: 'CHILD_WORKFLOW_EXECUTION_COMPLETED', fields: ['result'] },
  WORKFLOW_EXECUTION_FAILED: { type: 'CHILD_WORKFLOW_EXECUTION_FAILED', fields: ['failure', 'retryState'] },
  WORKFLOW_EXECUTION_CANCELED: { type: 'CHILD_WORKFLOW_EXECUTION_CANCELED', fields: ['details'] },
  WORKFLOW_EXECUTION_TIMED_OUT: { type: 'CHILD_WORKFLOW_EXECUTION_TIMED_OUT', fields: ['retryState'] },
  WORKFLOW_EXECUTION_TERMINATED: { type: 'CHILD_WORKFLOW_EXECUTION_TERMINATED', fields: [] },
};

/** Tells the parent (if it is still open) how its child ended. */
export function notifyParent(engine: Engine, childRun: Run, closeType: string, closeAttrs: Msg): void {
  const link = childRun.parent;
  if (!link) return;
  const parent = engine.namespaces.get(link.namespace)?.runs.get(link.runId);
  const child = parent?.pendingChildren.get(link.initiatedEventId);
  const mapping = CHILD_EVENTS[closeType];
  if (!parent || !child || !mapping) return;
  parent.children.delete(link.initiatedEventId);
  const attrs: Msg = {
    namespace: child.namespace,
    workflowExecution: childRun.execution,
    workflowType: { name: childRun.workflowType },
    initiatedEventId: child.initiatedEventId,
  };
  for (const f of mapping.fields) attrs[f] = closeAttrs[f];
  deliverEvent(engine, parent, () => {
    parent.append(mapping.type, { ...attrs, startedEventId: child.startedEventId }, engine.now());
  });
}

export function applyParentClosePolicy(engine: Engine, run: Run): void {
  for (const child of run.pendingChildren.values()) {
    const childRun = engine.namespaces.get(child.namespace) && engine.currentRun(child.namespace, child.workflowId);
    if (!childRun?.open || childRun.parent?.workflowId !== run.workflowId) continue;
    if (child.parentClosePolicy === ParentClosePolicy.TERMINATE) {
      terminateRun(engine, childRun, 'by parent close policy', undefined, engine.identity);
    } else if (child.parentClosePolicy === ParentClosePolicy.REQUEST_CANCEL) {
      requestCancelRun(engine, childRun, { identity: engine.identity, reason: 'by parent close policy' });
    }
  }
  if (run.pendingChildren.size) run.children.clear();
}

export function initiateSignalExternal(engine: Engine, run: Run, a: Msg, completedEventId: number): () => void {
  const namespace: string = a.namespace || run.namespace;
  const base = { namespace, workflowExecution: a.execution, control: a.control };
  const initiatedEventId = run.append(
    'SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED',
    { ...base, workflowTaskCompletedEventId: completedEventId, signalName: a.signalName, input: a.input, childWorkflowOnly: a.childWorkflowOnly, header: a.header },
    engine.now(),
  );
  return () => {
    try {
      const target = engine.findRun(namespace, a.execution);
      signalRun(engine, target, { signalName: a.signalName, input: a.input, header: a.header, identity: engine.identity });
      deliverEvent(engine, run, () => run.append('EXTERNAL_WORKFLOW_EXECUTION_SIGNALED', { ...base, initiatedEventId }, engine.now()));
    } catch {
      deliverEvent(engine, run, () =>
        run.append(
          'SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_FAILED',
          { ...base, cause: 1, initiatedEventId, workflowTaskCompletedEventId: completedEventId },
          engine.now(),
        ),
      );
    }
  };
}

export function initiateCancelExternal(engine: Engine, run: Run, a: Msg, completedEventId: number): () => void {
  const namespace: string = a.namespace || run.namespace;
  const workflowExecution = { workflowId: a.workflowId, runId: a.runId };
  const initiatedEventId = run.append(
    'REQUEST_CANCEL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED',
    { namespace, workflowExecution, control: a.control, childWorkflowOnly: a.childWorkflowOnly, reason: a.reason, workflowTaskCompletedEventId: completedEventId },
    engine.now(),
  );
  return () => {
    try {
      const target = engine.findRun(namespace, workflowExecution);
      requestCancelRun(engine, target, {
        identity: engine.identity,
        reason: a.reason,
        externalInitiatedEventId: initiatedEventId,
        externalWorkflowExecution: run.execution,
      });
      deliverEvent(engine, run, () =>
        run.append('EXTERNAL_WORKFLOW_EXECUTION_CANCEL_REQUESTED', { namespace, workflowExecution, initiatedEventId }, engine.now()),
      );
    } catch {
      deliverEvent(engine, run, () =>
        run.append(
          'REQUEST_CANCEL_EXTERNAL_WORKFLOW_EXECUTION_FAILED',
          { namespace, workflowExecution, cause: 1, initiatedEventId, control: a.control, workflowTaskCompletedEventId: completedEventId },
          engine.now(),
        ),
      );
    }
  };
}
