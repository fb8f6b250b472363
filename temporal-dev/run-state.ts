// What a run keeps besides its history (temporal-dev/run.ts): its workflow task, activities, children, updates and
// timers, each made only when the run has one (issue 15: a run waiting days on one timer holds little else).
import type { Msg } from './proto';
import type { Scheduled } from './scheduler';

export interface WorkflowTask {
  scheduledEventId: number;
  startedEventId: number; // 0 until a worker picks it up
  attempt: number;
  /** Retries after the first failure are transient: their events reach history only if the attempt completes. */
  transient: boolean;
  transientEvents: Msg[];
  scheduledTime: number;
  startedTime: number;
  timeout?: Scheduled;
  /** Update requests handed to the worker with this task. */
  deliveredUpdates: string[];
}

export interface ActivityState {
  scheduledEventId: number;
  attrs: Msg; // ActivityTaskScheduledEventAttributes, timeouts normalised
  attempt: number;
  state: 'scheduled' | 'started' | 'backoff';
  scheduledTime: number;
  attemptScheduledTime: number;
  startedTime: number;
  startedIdentity: string;
  startedRequestId: string;
  heartbeatDetails?: Msg;
  lastHeartbeatTime: number;
  lastFailure?: Msg;
  cancelRequested: boolean;
  cancelRequestedEventId: number;
  deadlines: Scheduled[]; // timers of the current attempt
  scheduleToClose?: Scheduled;
  nextAttemptAt: number;
}

export interface ChildState {
  initiatedEventId: number;
  namespace: string;
  workflowId: string;
  workflowType: string;
  runId: string; // '' until started
  startedEventId: number;
  parentClosePolicy: number;
}

export interface UpdateState {
  id: string;
  request: Msg; // temporal.api.update.v1.Request
  stage: number; // UpdateStage
  outcome?: Msg;
  delivered: boolean;
  acceptedEventId: number;
  waiters: Set<() => void>;
}

export interface Collections {
  activities?: Map<number, ActivityState>;
  children?: Map<number, ChildState>;
  updates?: Map<string, UpdateState>;
  attachedQueries?: Set<string>;
  signalRequestIds?: Set<string>;
  listeners?: Set<() => void>;
}

/** A pending timer: its scheduler entry (`at`, `cancel()`) with the ids of its events. */
export interface TimerState extends Scheduled {
  readonly timerId: string;
  readonly startedEventId: number;
  /** The TIMER_FIRED append while it is held back behind a running workflow task. */
  pendingFire: (() => void) | undefined;
}
