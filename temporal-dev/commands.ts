// Turns the commands of a completed workflow task into history events and side effects, in command order.
// Side effects on other runs (starting a child, signalling or cancelling another workflow) run after the
// task's events are committed, as the real server does them asynchronously.
import { requestCancelActivity, scheduleActivity } from './activities';
import { initiateCancelExternal, initiateChild, initiateSignalExternal } from './children';
import type { Engine } from './engine';
import { closeRun, continueAsNew, failRun } from './executions';
import { CommandType, type Msg } from './proto';
import type { Run } from './run';
import type { WorkflowTask } from './run-state';
import { cancelTimer, startTimer } from './timers';
import { applyUpdateMessage } from './updates';

interface CommandOutcome {
  needsWorkflowTask: boolean;
  afterCommit: Array<() => void>;
  /** Activity tasks started for the completing worker (eager execution), returned in the completion response. */
  eagerActivityTasks: Msg[];
}

export function handleCommands(
  engine: Engine,
  run: Run,
  commands: Msg[],
  messages: Msg[],
  completedEventId: number,
  _wft: WorkflowTask,
  worker?: { identity: string },
): CommandOutcome {
  const outcome: CommandOutcome = { needsWorkflowTask: false, afterCommit: [], eagerActivityTasks: [] };
  const pendingMessages = new Map<string, Msg>(messages.map((m) => [m.id as string, m]));
  const now = engine.now();
  const base = { workflowTaskCompletedEventId: completedEventId };
  for (const command of commands) {
    if (!run.open) break;
    switch (command.commandType) {
      case CommandType.SCHEDULE_ACTIVITY_TASK: {
        const a = command.scheduleActivityTaskCommandAttributes ?? {};
        // The worker reserved a slot for each activity it asks to run eagerly (sdk-core only asks for its own queue).
        const task = scheduleActivity(engine, run, a, completedEventId, worker && a.requestEagerExecution ? worker : undefined);
        if (task) outcome.eagerActivityTasks.push(task);
        break;
      }
      case CommandType.REQUEST_CANCEL_ACTIVITY_TASK:
        if (requestCancelActivity(engine, run, command.requestCancelActivityTaskCommandAttributes ?? {}, completedEventId)) {
          outcome.needsWorkflowTask = true;
        }
        break;
      case CommandType.START_TIMER:
        startTimer(engine, run, command.startTimerCommandAttributes ?? {}, completedEventId);
        break;
      case CommandType.CANCEL_TIMER:
        cancelTimer(engine, run, command.cancelTimerCommandAttributes ?? {}, completedEventId);
        break;
      case CommandType.COMPLETE_WORKFLOW_EXECUTION:
        closeRun(engine, run, 'WORKFLOW_EXECUTION_COMPLETED', {
          result: command.completeWorkflowExecutionCommandAttributes?.result,
          ...base,
        });
        break;
      case CommandType.FAIL_WORKFLOW_EXECUTION:
        failRun(engine, run, command.failWorkflowExecutionCommandAttributes?.failure ?? {}, completedEventId);
        break;
      case CommandType.CANCEL_WORKFLOW_EXECUTION:
        closeRun(engine, run, 'WORKFLOW_EXECUTION_CANCELED', {
          details: command.cancelWorkflowExecutionCommandAttributes?.details,
          ...base,
        });
        break;
      case CommandType.CONTINUE_AS_NEW_WORKFLOW_EXECUTION:
        continueAsNew(engine, run, command.continueAsNewWorkflowExecutionCommandAttributes ?? {}, completedEventId);
        break;
      case CommandType.RECORD_MARKER: {
        const a = command.recordMarkerCommandAttributes ?? {};
        run.append('MARKER_RECORDED', { markerName: a.markerName, details: a.details, header: a.header, failure: a.failure, ...base }, now);
        break;
      }
      case CommandType.START_CHILD_WORKFLOW_EXECUTION:
        outcome.afterCommit.push(initiateChild(engine, run, command.startChildWorkflowExecutionCommandAttributes ?? {}, completedEventId));
        break;
      case CommandType.SIGNAL_EXTERNAL_WORKFLOW_EXECUTION:
        outcome.afterCommit.push(
          initiateSignalExternal(engine, run, command.signalExternalWorkflowExecutionCommandAttributes ?? {}, completedEventId),
        );
        break;
      case CommandType.REQUEST_CANCEL_EXTERNAL_WORKFLOW_EXECUTION:
        outcome.afterCommit.push(
          initiateCancelExternal(engine, run, command.requestCancelExternalWorkflowExecutionCommandAttributes ?? {}, completedEventId),
        );
        break;
      case CommandType.UPSERT_WORKFLOW_SEARCH_ATTRIBUTES: {
        const searchAttributes = command.upsertWorkflowSearchAttributesCommandAttributes?.searchAttributes ?? {};
        run.append('UPSERT_WORKFLOW_SEARCH_ATTRIBUTES', { searchAttributes, ...base }, now); // read back by Run.properties
        break;
      }
      case CommandType.MODIFY_WORKFLOW_PROPERTIES: {
        const upsertedMemo = command.modifyWorkflowPropertiesCommandAttributes?.upsertedMemo ?? {};
        run.append('WORKFLOW_PROPERTIES_MODIFIED', { upsertedMemo, ...base }, now); // read back by Run.properties
        break;
      }
      case CommandType.PROTOCOL_MESSAGE: {
        const id: string = command.protocolMessageCommandAttributes?.messageId ?? '';
        const message = pendingMessages.get(id);
        pendingMessages.delete(id);
        if (message) applyUpdateMessage(engine, run, message);
        break;
      }
      default:
        // Nexus operations are not supported (GetSystemInfo says so); anything else is a worker bug.
        break;
    }
  }
  // Messages without a command (update rejections) take effect after the commands.
  for (const message of pendingMessages.values()) applyUpdateMessage(engine, run, message);
  return outcome;
}
