// Workflow updates: admitted requests ride to the worker as protocol messages on the next workflow task; the
// worker's Acceptance / Rejection / Response messages move them through their lifecycle stages.
import type { Engine } from './engine';
import { notFound, workflowCompleted } from './errors';
import { packAny, unpackAny, UpdateStage, type Msg } from './proto';
import type { Run } from './run';
import type { UpdateState, WorkflowTask } from './run-state';
import type { PollContext } from './task-queues';
import { scheduleWorkflowTask } from './workflow-tasks';

export function pendingUpdateMessages(run: Run, wft: WorkflowTask): Msg[] {
  const messages: Msg[] = [];
  for (const u of run.updates.values()) {
    if (u.delivered || u.stage !== UpdateStage.ADMITTED) continue;
    u.delivered = true;
    wft.deliveredUpdates.push(u.id);
    messages.push({
      id: `${u.id}/request`,
      protocolInstanceId: u.id,
      eventId: wft.startedEventId - 1,
      body: packAny('temporal.api.update.v1.Request', u.request),
    });
  }
  return messages;
}

export function requeueDeliveredUpdates(run: Run, wft: WorkflowTask): void {
  for (const id of wft.deliveredUpdates) {
    const u = run.updates.get(id);
    if (u && u.stage === UpdateStage.ADMITTED) u.delivered = false;
  }
}

/** Applies one update protocol message from a workflow task completion. */
export function applyUpdateMessage(engine: Engine, run: Run, message: Msg): void {
  const body = unpackAny(message.body);
  const u = run.updates.get(message.protocolInstanceId);
  if (!body || !u) return;
  const now = engine.now();
  if (body.type === 'temporal.api.update.v1.Acceptance') {
    u.acceptedEventId = run.append(
      'WORKFLOW_EXECUTION_UPDATE_ACCEPTED',
      {
        protocolInstanceId: u.id,
        acceptedRequestMessageId: body.value.acceptedRequestMessageId,
        acceptedRequestSequencingEventId: body.value.acceptedRequestSequencingEventId,
        acceptedRequest: body.value.acceptedRequest ?? u.request,
      },
      now,
    );
    advance(u, UpdateStage.ACCEPTED!);
  } else if (body.type === 'temporal.api.update.v1.Response') {
    run.append(
      'WORKFLOW_EXECUTION_UPDATE_COMPLETED',
      { meta: body.value.meta, acceptedEventId: u.acceptedEventId, outcome: body.value.outcome },
      now,
    );
    u.outcome = body.value.outcome;
    advance(u, UpdateStage.COMPLETED!);
  } else if (body.type === 'temporal.api.update.v1.Rejection') {
    // A rejected update leaves no trace in history; the caller gets the validator's failure.
    u.outcome = { failure: body.value.failure };
    advance(u, UpdateStage.COMPLETED!);
  }
}

function advance(u: UpdateState, stage: number): void {
  u.stage = stage;
  for (const w of [...u.waiters]) w();
}

export function wakeUpdateWaiters(run: Run): void {
  for (const u of run.updates.values()) for (const w of [...u.waiters]) w();
}

export async function updateWorkflow(engine: Engine, run: Run, req: Msg, ctx: PollContext): Promise<Msg> {
  const request: Msg = req.request ?? {};
  const updateId: string = request.meta?.updateId ?? '';
  let u = run.updates.get(updateId);
  if (!u) {
    if (!run.open) throw workflowCompleted();
    u = { id: updateId, request, stage: UpdateStage.ADMITTED!, delivered: false, acceptedEventId: 0, waiters: new Set() };
    run.updates.set(updateId, u);
    scheduleWorkflowTask(engine, run);
  }
  const wanted = Math.max(req.waitPolicy?.lifecycleStage ?? UpdateStage.ACCEPTED!, UpdateStage.ADMITTED!);
  await waitForStage(run, u, wanted, ctx);
  return {
    updateRef: { workflowExecution: run.execution, updateId },
    outcome: u.stage === UpdateStage.COMPLETED ? u.outcome : undefined,
    stage: u.stage,
  };
}

export async function pollUpdate(engine: Engine, req: Msg, ctx: PollContext): Promise<Msg> {
  const run = engine.findRun(req.namespace, req.updateRef?.workflowExecution);
  const u = run.updates.get(req.updateRef?.updateId ?? '');
  // A rejected update was never accepted and is not kept, as on the real server.
  if (!u || (u.stage === UpdateStage.COMPLETED && u.acceptedEventId === 0)) {
    throw notFound(`update ${req.updateRef?.updateId ?? ''} not found`);
  }
  await waitForStage(run, u, req.waitPolicy?.lifecycleStage || UpdateStage.COMPLETED!, ctx);
  return {
    outcome: u.stage === UpdateStage.COMPLETED ? u.outcome : undefined,
    stage: u.stage,
    updateRef: { workflowExecution: run.execution, updateId: u.id },
  };
}

async function waitForStage(run: Run, u: UpdateState, stage: number, ctx: PollContext): Promise<void> {
  let cancelled = false;
  ctx.onCancel(() => {
    cancelled = true;
    for (const w of [...u.waiters]) w();
  });
  while (u.stage < stage) {
    if (cancelled) return;
    if (!run.open) throw workflowCompleted();
    await new Promise<void>((resolve) => {
      const wake = () => {
        u.waiters.delete(wake);
        resolve();
      };
      u.waiters.add(wake);
    });
  }
}
