// One workflow run: its history and the mutable state derived from it. History is append-only; events that
// arrive while a workflow task is running are held back (`buffered`) and appended after that task completes,
// which is the ordering sdk-core insists on.
// Just over 300 lines: the compact storage of a waiting run (issue 15) is part of the run and stays beside it.
import { decode, encode, EventType, timestamp, WorkflowStatus, type Msg } from './proto';
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

interface TimerState {
  startedEventId: number;
  handle: Scheduled;
  pendingFire?: () => void;
}

const HISTORY_EVENT = 'temporal.api.history.v1.HistoryEvent';
const MEMO = 'temporal.api.common.v1.Memo';
const SEARCH_ATTRIBUTES = 'temporal.api.common.v1.SearchAttributes';
const EMPTY = Buffer.alloc(0);
/** `encodedSearchAttributes`: those of the start event. */
const START: unique symbol = Symbol('the start event');
/** What a read of a collection the run does not have sees (never written: the type is read-only). */
const NONE: ReadonlyMap<never, never> = new Map<never, never>();

/**
 * A record of payloads kept as one encoded message (`field` is its map field), or nothing when empty. Kept as a
 * one-byte (latin1) string of the bytes, as a compacted history is: a malloc'd buffer of a few hundred bytes per
 * run, made while a burst's short-lived buffers come and go around it, keeps a page of glibc's heap from being
 * given back (issue 15: the search attributes a workflow upserts pinned ~4 KiB a waiting run that way).
 */
function encodeRecord(type: string, field: string, record: Record<string, Msg>): string | undefined {
  return Object.keys(record).length ? encode(type, { [field]: record }).toString('latin1') : undefined;
}

function decodeRecord(type: string, encoded: string): Msg {
  return decode(type, Buffer.from(encoded, 'latin1'));
}

export class Run {
  /**
   * The history (issue 15): every event's encoded HistoryEvent back to back in one buffer, `eventEnds[i]` the end
   * of event i + 1, so a run waiting on a timer for days holds one buffer of a few hundred bytes per event rather
   * than a tree of objects, timestamps and payload Buffers (or a Buffer object per event). Events are decoded when
   * read (a workflow task, a history page); `eventCount` answers "how many" without decoding. The buffer grows by
   * doubling and is trimmed to its length by `compact()` once a workflow task completes (when a run starts waiting).
   * Decoded events' bytes fields are views of this buffer: bytes are only ever appended, never overwritten.
   * A compacted history is kept as a one-byte (latin1) string of the same bytes: in V8's heap, which moves and
   * compacts it, not in malloc'd memory, where 10,000 histories made during a burst, interleaved with the burst's
   * short-lived buffers, kept glibc's main heap from shrinking after it (issue 15). A read then decodes from a copy
   * of the event's bytes; the next append turns it back into a buffer.
   */
  private history: Buffer | string = EMPTY;
  private eventEnds: number[] = [];
  /** The start event's attributes until that event is appended; from then on they are read from the history. */
  private startedBeforeAppend: Msg | undefined;
  /**
   * Memo and search attributes, encoded (see `memo`, `searchAttributes`). Search attributes as the start gave them
   * are read from the start event (`START`) until a write replaces them: a second copy cost ~0.6 KiB a run.
   */
  private encodedMemo: string | undefined;
  private encodedSearchAttributes: string | typeof START | undefined;
  status = WorkflowStatus.RUNNING!;
  closeTime = 0;
  wft: WorkflowTask | null = null;
  /** Events held back while a workflow task runs. */
  buffered: Array<() => void> = [];
  /** Ask for another workflow task once the running one completes (e.g. an update arrived). */
  wftWanted = false;
  lastCompletedStartedEventId = 0;
  /**
   * The run's collections are made when first used and dropped again by `compact()` when empty: a waiting run
   * mostly has none, and seven empty Maps and Sets cost ~1.3 KiB a run (issue 15).
   */
  private collections: {
    activities?: Map<number, ActivityState>;
    timers?: Map<string, TimerState>;
    children?: Map<number, ChildState>;
    updates?: Map<string, UpdateState>;
    attachedQueries?: Set<string>;
    signalRequestIds?: Set<string>;
    listeners?: Set<() => void>;
  } = {};
  readonly runTimeouts: Scheduled[] = [];
  /** The start request's id ('' if none): a start repeating it gets this run back. */
  requestId = '';
  cancelRequested = false;
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
    started: Msg, // WorkflowExecutionStartedEventAttributes
    readonly taskTimeoutMs: number,
    readonly executionExpiry: number, // 0 = none
  ) {
    this.startedBeforeAppend = started;
  }

  /** WorkflowExecutionStartedEventAttributes (decoded from the first event: a fresh object on every read). */
  get started(): Msg {
    return this.startedBeforeAppend ?? this.eventsBetween(0, 1)[0]!.workflowExecutionStartedEventAttributes;
  }

  /** The memo's fields (a fresh record on every read: assign a new record to change it). */
  get memo(): Readonly<Record<string, Msg>> {
    return this.encodedMemo ? decodeRecord(MEMO, this.encodedMemo).fields : {};
  }

  set memo(fields: Record<string, Msg>) {
    this.encodedMemo = encodeRecord(MEMO, 'fields', fields);
  }

  /** The search attributes' indexed fields (a fresh record on every read: assign a new record to change them). */
  get searchAttributes(): Readonly<Record<string, Msg>> {
    if (this.encodedSearchAttributes === START) return this.started.searchAttributes?.indexedFields ?? {};
    return this.encodedSearchAttributes ? decodeRecord(SEARCH_ATTRIBUTES, this.encodedSearchAttributes).indexedFields : {};
  }

  set searchAttributes(indexedFields: Record<string, Msg>) {
    this.encodedSearchAttributes = encodeRecord(SEARCH_ATTRIBUTES, 'indexedFields', indexedFields);
  }

  /** The search attributes are those of the start event, once appended (nothing kept beside it). */
  searchAttributesAsStarted(): void {
    if (this.startedBeforeAppend) throw new Error('the start event is not appended yet');
    this.encodedSearchAttributes = START;
  }

  get activities(): Map<number, ActivityState> {
    return (this.collections.activities ??= new Map());
  }

  get timers(): Map<string, TimerState> {
    return (this.collections.timers ??= new Map());
  }

  get children(): Map<number, ChildState> {
    return (this.collections.children ??= new Map());
  }

  /**
   * Reads of activities and children that leave no empty Map behind: a describe (Herald's reconciler describes
   * every new post's workflow) or a close of a run that never had any (~0.4 KiB a run, issue 15).
   */
  get pendingActivities(): ReadonlyMap<number, ActivityState> {
    return this.collections.activities ?? NONE;
  }

  get pendingChildren(): ReadonlyMap<number, ChildState> {
    return this.collections.children ?? NONE;
  }

  get updates(): Map<string, UpdateState> {
    return (this.collections.updates ??= new Map());
  }

  /** Queries riding with the next workflow task (answered in its completion). */
  get attachedQueries(): Set<string> {
    return (this.collections.attachedQueries ??= new Set());
  }

  get signalRequestIds(): Set<string> {
    return (this.collections.signalRequestIds ??= new Set());
  }

  /** Called on every appended event (history long polls, query waits). */
  get listeners(): Set<() => void> {
    return (this.collections.listeners ??= new Set());
  }

  get open(): boolean {
    return this.status === WorkflowStatus.RUNNING;
  }

  get execution(): Msg {
    return { workflowId: this.workflowId, runId: this.runId };
  }

  get nextEventId(): number {
    return this.eventEnds.length + 1;
  }

  get eventCount(): number {
    return this.eventEnds.length;
  }

  /** The whole history, decoded (a fresh array of fresh objects on every call). */
  get events(): Msg[] {
    return this.eventsBetween(0);
  }

  eventsBetween(start: number, end = this.eventEnds.length): Msg[] {
    const events: Msg[] = [];
    for (let i = start; i < Math.min(end, this.eventEnds.length); i++) events.push(this.decodeEvent(i));
    return events;
  }

  private decodeEvent(index: number): Msg {
    const start = index ? this.eventEnds[index - 1]! : 0;
    const end = this.eventEnds[index]!;
    const history = this.history;
    return decode(HISTORY_EVENT, typeof history === 'string' ? Buffer.from(history.slice(start, end), 'latin1') : history.subarray(start, end));
  }

  get wftRunning(): boolean {
    return this.wft !== null && this.wft.startedEventId !== 0;
  }

  /** Builds an event with the next id without appending it (transient workflow tasks). */
  makeEvent(type: string, attrs: Msg, now: number, eventId = this.eventEnds.length + 1): Msg {
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
    if (event.eventId !== this.eventEnds.length + 1) throw new Error(`event id ${event.eventId} out of order`);
    const bytes = encode(HISTORY_EVENT, event);
    const end = this.historySizeBytes + bytes.length;
    let history = this.history;
    if (typeof history === 'string' || end > history.length) {
      // Memory of its own (never a slice of a shared pool slab, which a week-long wait would keep alive).
      const grown = Buffer.allocUnsafeSlow(Math.max(end, history.length * 2, 256));
      if (typeof history === 'string') grown.write(history, 0, 'latin1');
      else history.copy(grown, 0, 0, this.historySizeBytes);
      this.history = history = grown;
    }
    bytes.copy(history, this.historySizeBytes);
    this.historySizeBytes = end;
    this.eventEnds.push(end);
    if (event.eventId === 1) this.startedBeforeAppend = undefined;
    const listeners = this.collections.listeners;
    if (listeners?.size) for (const listener of [...listeners]) listener();
    return event.eventId;
  }

  lastEvent(): Msg {
    return this.decodeEvent(this.eventEnds.length - 1);
  }

  /** Keeps the history as a string and the index at its length: called when the run may wait a long time. */
  compact(): void {
    if (typeof this.history !== 'string') this.history = this.history.toString('latin1', 0, this.historySizeBytes);
    this.eventEnds = this.eventEnds.slice();
    const collections = this.collections;
    const kept: typeof collections = {};
    for (const [name, collection] of Object.entries(collections)) {
      if (collection.size) Object.assign(kept, { [name]: collection });
    }
    this.collections = kept;
  }
}
