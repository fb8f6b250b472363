// One workflow run: its history and the mutable state derived from it. History is append-only; events that
// arrive while a workflow task is running are held back (`buffered`) and appended after that task completes,
// which is the ordering sdk-core insists on.
import { decode, encode, EventType, ownedCopy, timestamp, WorkflowStatus, type Msg } from './proto';
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

const HISTORY_EVENT = 'temporal.api.history.v1.HistoryEvent';

export class Run {
  /**
   * The history, each event kept as its encoded HistoryEvent (issue 15): a run waiting on a timer for days holds a
   * few hundred bytes per event rather than a tree of objects, timestamps and payload Buffers. Events are decoded
   * when read (a workflow task, a history page); `eventCount` answers "how many" without decoding.
   */
  private readonly encodedEvents: Buffer[] = [];
  status = WorkflowStatus.RUNNING!;
  closeTime = 0;
  wft: WorkflowTask | null = null;
  /** Events held back while a workflow task runs. */
  buffered: Array<() => void> = [];
  /** Ask for another workflow task once the running one completes (e.g. an update arrived). */
  wftWanted = false;
  lastCompletedStartedEventId = 0;
  readonly activities = new Map<number, ActivityState>();
  readonly timers = new Map<string, { startedEventId: number; handle: Scheduled; pendingFire?: () => void }>();
  readonly children = new Map<number, ChildState>();
  readonly updates = new Map<string, UpdateState>();
  readonly requestIds = new Set<string>();
  /** Queries riding with the next workflow task (answered in its completion). */
  readonly attachedQueries = new Set<string>();
  readonly signalRequestIds = new Set<string>();
  readonly runTimeouts: Scheduled[] = [];
  /** Called on every appended event (history long polls, query waits). */
  readonly listeners = new Set<() => void>();
  cancelRequested = false;
  memo: Record<string, Msg> = {};
  searchAttributes: Record<string, Msg> = {};
  parent?: { namespace: string; workflowId: string; runId: string; initiatedEventId: number };
  executionTime = 0;
  forgotten = false;
  historySizeBytes = 0;

  constructor(
    readonly namespace: string,
    readonly workflowId: string,
    readonly runId: string,
    readonly firstExecutionRunId: string,
    readonly workflowType: string,
    readonly taskQueue: string,
    readonly startTime: number,
    readonly started: Msg, // WorkflowExecutionStartedEventAttributes
    readonly taskTimeoutMs: number,
    readonly executionExpiry: number, // 0 = none
  ) {}

  get open(): boolean {
    return this.status === WorkflowStatus.RUNNING;
  }

  get execution(): Msg {
    return { workflowId: this.workflowId, runId: this.runId };
  }

  get nextEventId(): number {
    return this.encodedEvents.length + 1;
  }

  get eventCount(): number {
    return this.encodedEvents.length;
  }

  /** The whole history, decoded (a fresh array of fresh objects on every call). */
  get events(): Msg[] {
    return this.eventsBetween(0);
  }

  eventsBetween(start: number, end = this.encodedEvents.length): Msg[] {
    return this.encodedEvents.slice(start, end).map((bytes) => decode(HISTORY_EVENT, bytes));
  }

  get wftRunning(): boolean {
    return this.wft !== null && this.wft.startedEventId !== 0;
  }

  /** Builds an event with the next id without appending it (transient workflow tasks). */
  makeEvent(type: string, attrs: Msg, now: number, eventId = this.encodedEvents.length + 1): Msg {
    const eventType = EventType[type];
    if (eventType === undefined) throw new Error(`unknown event type ${type}`);
    const field = `${type.toLowerCase().replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())}EventAttributes`;
    return { eventId, eventTime: timestamp(now), eventType, taskId: eventId, [field]: attrs };
  }

  /** Appends an event; `type` is the short EventType name, e.g. 'TIMER_FIRED'. Returns the event id. */
  append(type: string, attrs: Msg, now: number): number {
    return this.appendEvent(this.makeEvent(type, attrs, now));
  }

  appendEvent(event: Msg): number {
    if (event.eventId !== this.encodedEvents.length + 1) throw new Error(`event id ${event.eventId} out of order`);
    const bytes = ownedCopy(encode(HISTORY_EVENT, event));
    this.encodedEvents.push(bytes);
    this.historySizeBytes += bytes.length;
    for (const listener of [...this.listeners]) listener();
    return event.eventId;
  }

  lastEvent(): Msg {
    return decode(HISTORY_EVENT, this.encodedEvents[this.encodedEvents.length - 1]!);
  }
}
