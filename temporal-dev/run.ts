// One workflow run: its history and the mutable state derived from it. History is append-only; events that
// arrive while a workflow task is running are held back (`buffered`) and appended after that task completes,
// which is the ordering sdk-core insists on.
// Over 300 lines: the compact storage of a waiting run (issue 15) is part of the run and stays beside it; the shapes
// of its other state are in run-state.ts, its fields other than its history, timers and ids in run-fields.ts.
import { deflateHistory, inflateHistory } from './history-storage';
import { decode, encode, EncodedMessage, EventType, lengthDelimited, lengthDelimitedHeader, timestamp, WorkflowStatus, type Msg } from './proto';
import { kindOf, NOTHING, RunFields } from './run-fields';
import type { ActivityState, ChildState, Collections, TimerState, UpdateState } from './run-state';
import { mergeSearchAttributes } from './visibility';

/** A history's bytes (as kept, or inflated), its events' ends, and the indexes of its property events. */
interface ReadableHistory {
  bytes: Buffer | string;
  ends: readonly number[];
  marked: readonly number[];
}

const HISTORY_EVENT = 'temporal.api.history.v1.HistoryEvent';
/** `History.events`' field number (temporal/api/history/v1/message.proto). */
const HISTORY_EVENTS_FIELD = 1;
const EMPTY = Buffer.alloc(0);
/** What a read of a collection the run does not have sees (never written: the type is read-only). */
const NONE: ReadonlyMap<never, never> = new Map<never, never>();
/** Events after the start that change a run's memo or search attributes. */
const PROPERTY_EVENTS: ReadonlySet<number> = new Set([EventType.UPSERT_WORKFLOW_SEARCH_ATTRIBUTES!, EventType.WORKFLOW_PROPERTIES_MODIFIED!]);
/** Timers a run keeps in a list (or, one, as itself); beyond, a Map (`Run.pendingTimers`). */
const TIMER_LIST_MAX = 16;
/** A run with nothing due sooner than this (or closed) keeps its history deflated (`compact`). */
const LONG_WAIT_MS = 60_000;

export class Run extends RunFields {
  /**
   * The history (issue 15): every event's encoded HistoryEvent back to back in one buffer, `eventEnds[i]` the end
   * of event i + 1, so a run waiting on a timer for days holds one buffer of a few hundred bytes per event rather
   * than a tree of objects, timestamps and payload Buffers (or a Buffer object per event). Events are decoded when
   * read (a workflow task, a history page); `eventCount` answers "how many" without decoding. The buffer grows by
   * doubling and is trimmed to its length by `compact()` once a workflow task completes (when a run starts waiting).
   * Decoded events' bytes fields are views of this buffer: bytes are only ever appended, never overwritten.
   * A compacted history is kept as a one-byte (latin1) string of the same bytes, deflated if the run waits long
   * (`history-storage.ts`): a read then decodes from a copy, and the next append turns it back into a buffer.
   * A deflated history carries its events' ends and which are property events in its own frames, so while it is
   * deflated `eventEnds` is just how many events there are (and `propertyEventIndexes` undefined).
   */
  private history: Buffer | string = EMPTY;
  private eventEnds: number[] | number = [];
  /** Event id of the last completed workflow task's started event. */
  lastCompletedStartedEventId = 0;
  status = WorkflowStatus.RUNNING!;
  historySizeBytes = 0;
  /**
   * Pending timers: the one timer itself when there is one (a scheduled post's: a Map for it was ~180 bytes, a list
   * of one 56), a list of exact length searched by id while there are a few, a Map beyond `TIMER_LIST_MAX` (a
   * workflow with thousands of timers would otherwise pay for all of them on every start and fire).
   */
  private pendingTimers: TimerState | readonly TimerState[] | Map<string, TimerState> = NOTHING;

  constructor(
    namespace: string,
    readonly workflowId: string,
    readonly runId: string,
    firstExecutionRunId: string,
    workflowType: string,
    taskQueue: string,
    readonly startTime: number,
    started: Msg, // WorkflowExecutionStartedEventAttributes
    taskTimeoutMs: number,
    executionExpiry: number, // 0 = none
    /** The start request's id ('' if none): a start repeating it gets this run back. Never changed (`ownStrings`). */
    readonly requestId = '',
  ) {
    super(kindOf(namespace, workflowType, taskQueue, taskTimeoutMs));
    const more = this.uncommon;
    more.startedBeforeAppend = started;
    if (firstExecutionRunId !== runId) more.firstExecutionRunId = firstExecutionRunId;
    more.executionExpiry = executionExpiry;
  }

  /**
   * Strings of the run's own that its history repeats, for its deflated history's dictionary (`dictionaryOf`): set
   * when the run is made and never changed, so the dictionary its history was deflated against is made again.
   */
  private get ownStrings(): string {
    return `${this.workflowId}\n${this.runId}\n${this.requestId}`;
  }


  /** WorkflowExecutionStartedEventAttributes (decoded from the first event: a fresh object on every read). */
  get started(): Msg {
    return this.startedBeforeAppend ?? this.eventsBetween(0, 1)[0]!.workflowExecutionStartedEventAttributes;
  }

  /**
   * Memo and search attributes as the history says: the start event's, then each upsert's in order (an empty
   * search attribute value removes it). Fresh records on every read.
   */
  get properties(): { memo: Record<string, Msg>; searchAttributes: Record<string, Msg> } {
    const stored = this.startedBeforeAppend ? undefined : this.readable();
    const [started, ...changes] = stored
      ? this.eventsAt([0, ...stored.marked], stored)
      : [{ workflowExecutionStartedEventAttributes: this.startedBeforeAppend }];
    const startedAttributes = started!.workflowExecutionStartedEventAttributes;
    const memo: Record<string, Msg> = { ...startedAttributes.memo?.fields };
    const searchAttributes: Record<string, Msg> = {};
    mergeSearchAttributes(searchAttributes, startedAttributes.searchAttributes?.indexedFields ?? {});
    for (const event of changes) {
      const upserted = event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields;
      if (upserted) mergeSearchAttributes(searchAttributes, upserted);
      Object.assign(memo, event.workflowPropertiesModifiedEventAttributes?.upsertedMemo?.fields);
    }
    return { memo, searchAttributes };
  }

  get memo(): Record<string, Msg> {
    return this.properties.memo;
  }

  get searchAttributes(): Record<string, Msg> {
    return this.properties.searchAttributes;
  }

  private get made(): Collections {
    return (this.uncommon.collections ??= {});
  }

  get activities(): Map<number, ActivityState> {
    return (this.made.activities ??= new Map());
  }

  get children(): Map<number, ChildState> {
    return (this.made.children ??= new Map());
  }

  /** The pending timers (a copy when they are many). */
  get timers(): readonly TimerState[] {
    const timers = this.pendingTimers;
    if (timers instanceof Map) return [...timers.values()];
    return 'timerId' in timers ? [timers] : timers;
  }

  timer(timerId: string): TimerState | undefined {
    const timers = this.pendingTimers;
    return timers instanceof Map ? timers.get(timerId) : this.timers.find((timer) => timer.timerId === timerId);
  }

  /** Adds a timer, or replaces the one with its id. */
  setTimer(timer: TimerState): void {
    const timers = this.pendingTimers;
    if (timers instanceof Map) timers.set(timer.timerId, timer);
    else this.keepTimers(this.timers.filter((t) => t.timerId !== timer.timerId).concat(timer));
  }

  deleteTimer(timerId: string): void {
    const timers = this.pendingTimers;
    if (!(timers instanceof Map)) this.keepTimers(this.timers.filter((timer) => timer.timerId !== timerId));
    else if (timers.delete(timerId) && !timers.size) this.pendingTimers = NOTHING;
  }

  /** Keeps a list of timers in the smallest form that holds it (`pendingTimers`). */
  private keepTimers(list: readonly TimerState[]): void {
    if (list.length > TIMER_LIST_MAX) this.pendingTimers = new Map(list.map((t) => [t.timerId, t]));
    else this.pendingTimers = list.length === 1 ? list[0]! : list.length ? list : NOTHING;
  }

  /** Removes every timer and returns them (a closing run cancels them). */
  takeTimers(): readonly TimerState[] {
    const timers = this.timers;
    this.pendingTimers = NOTHING;
    return timers;
  }

  /** Events that arrived while a workflow task runs, to append after its completion. */
  get buffered(): ReadonlyArray<() => void> {
    return this.held ?? NOTHING;
  }

  holdBack(append: () => void): void {
    (this.held ??= []).push(append);
  }

  /** Withdraws a held-back event (a timer fire that a cancel overtook). */
  withdrawHeld(append: () => void): void {
    const left = this.held?.filter((held) => held !== append);
    this.held = left?.length ? left : undefined;
  }

  /** Removes the held-back events and returns them, to append or to drop. */
  takeHeld(): ReadonlyArray<() => void> {
    const held = this.held ?? NOTHING;
    this.held = undefined;
    return held;
  }

  /**
   * Reads of activities and children that leave no empty Map behind: a describe (Herald's reconciler describes
   * every new post's workflow) or a close of a run that never had any (~0.4 KiB a run, issue 15).
   */
  get pendingActivities(): ReadonlyMap<number, ActivityState> {
    return this.collections?.activities ?? NONE;
  }

  get pendingChildren(): ReadonlyMap<number, ChildState> {
    return this.collections?.children ?? NONE;
  }

  get updates(): Map<string, UpdateState> {
    return (this.made.updates ??= new Map());
  }

  /** Queries riding with the next workflow task (answered in its completion). */
  get attachedQueries(): Set<string> {
    return (this.made.attachedQueries ??= new Set());
  }

  get signalRequestIds(): Set<string> {
    return (this.made.signalRequestIds ??= new Set());
  }

  /** Called on every appended event (history long polls, query waits). */
  get listeners(): Set<() => void> {
    return (this.made.listeners ??= new Set());
  }

  get executionTime(): number {
    return this.startTime + this.startDelayMs;
  }

  get open(): boolean {
    return this.status === WorkflowStatus.RUNNING;
  }

  get execution(): Msg {
    return { workflowId: this.workflowId, runId: this.runId };
  }

  get nextEventId(): number {
    return this.eventCount + 1;
  }

  get eventCount(): number {
    const ends = this.eventEnds;
    return typeof ends === 'number' ? ends : ends.length;
  }

  /** How the history is kept: growing while the run is active, a string once it waits, deflated if it waits long. */
  get storedAs(): 'buffer' | 'string' | 'deflated' {
    if (typeof this.eventEnds === 'number') return 'deflated';
    return Buffer.isBuffer(this.history) ? 'buffer' : 'string';
  }

  /** The whole history, decoded (a fresh array of fresh objects on every call). */
  get events(): Msg[] {
    return this.eventsBetween(0);
  }

  eventsBetween(start: number, end = this.eventCount): Msg[] {
    const indexes: number[] = [];
    for (let i = start; i < Math.min(end, this.eventCount); i++) indexes.push(i);
    return this.eventsAt(indexes);
  }

  /**
   * A `History` message of the events from index `start` on, then `extra` (events not appended), encoded: the stored
   * events' bytes are its `events` entries as they are, never decoded.
   */
  encodedHistory(start: number, extra: readonly Msg[] = []): EncodedMessage {
    const { bytes, ends } = this.readable();
    const from = start ? ends[start - 1]! : 0;
    const read = historyBytes(bytes, from, ends[ends.length - 1] ?? 0);
    const parts: Uint8Array[] = [];
    for (let i = start; i < ends.length; i++) {
      const event = read.subarray((i ? ends[i - 1]! : 0) - from, ends[i]! - from);
      parts.push(lengthDelimitedHeader(HISTORY_EVENTS_FIELD, event.length), event);
    }
    for (const event of extra) parts.push(lengthDelimited(HISTORY_EVENTS_FIELD, encode(HISTORY_EVENT, event)));
    return new EncodedMessage(Buffer.concat(parts));
  }

  /** The events at these indexes (ascending), decoded from one read of the history's bytes. */
  private eventsAt(indexes: number[], stored?: ReadableHistory): Msg[] {
    if (!indexes.length) return [];
    const { bytes, ends } = stored ?? this.readable();
    const from = indexes[0]! ? ends[indexes[0]! - 1]! : 0;
    const read = historyBytes(bytes, from, ends[indexes[indexes.length - 1]!]!);
    return indexes.map((i) => decode(HISTORY_EVENT, read.subarray((i ? ends[i - 1]! : 0) - from, ends[i]! - from)));
  }

  /** Turns a deflated history back into bytes and lists of its own (the next event is appended); returns its ends. */
  private inflated(): number[] {
    const ends = this.eventEnds;
    if (typeof ends !== 'number') return ends;
    const { bytes, ends: inflatedEnds, marked } = inflateHistory(this.ownStrings, this.history as string);
    this.history = bytes;
    this.propertyEventIndexes = marked.length ? marked : undefined;
    return (this.eventEnds = inflatedEnds);
  }

  /** The history as it is kept, or inflated (a fresh copy) when deflated, with its events' ends and property events. */
  private readable(): ReadableHistory {
    const ends = this.eventEnds;
    if (typeof ends === 'number') return inflateHistory(this.ownStrings, this.history as string);
    return { bytes: this.history, ends, marked: this.propertyEventIndexes ?? NOTHING };
  }

  get wftRunning(): boolean {
    return this.wft !== null && this.wft.startedEventId !== 0;
  }

  /** Builds an event with the next id without appending it (transient workflow tasks). */
  makeEvent(type: string, attrs: Msg, now: number, eventId = this.nextEventId): Msg {
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
    if (event.eventId !== this.nextEventId) throw new Error(`event id ${event.eventId} out of order`);
    const bytes = encode(HISTORY_EVENT, event);
    const end = this.historySizeBytes + bytes.length;
    const eventEnds = this.inflated();
    let history = this.history;
    if (!Buffer.isBuffer(history) || end > history.length) {
      // Memory of its own (never a slice of a shared pool slab, which a week-long wait would keep alive).
      const grown = Buffer.allocUnsafeSlow(Math.max(end, this.historySizeBytes * 2, 256));
      historyBytes(history, 0, this.historySizeBytes).copy(grown);
      this.history = history = grown;
    }
    bytes.copy(history, this.historySizeBytes);
    this.historySizeBytes = end;
    eventEnds.push(end);
    if (event.eventId === 1 && this.more) this.more.startedBeforeAppend = undefined;
    if (PROPERTY_EVENTS.has(event.eventType)) {
      // A new array of the exact length, not a push: a push onto [] reserves room for 17 (152 bytes for one index).
      const index = eventEnds.length - 1;
      this.propertyEventIndexes = this.propertyEventIndexes?.concat(index) ?? [index];
    }
    const listeners = this.collections?.listeners;
    if (listeners?.size) for (const listener of [...listeners]) listener();
    return event.eventId;
  }

  lastEvent(): Msg {
    return this.eventsAt([this.eventCount - 1])[0]!;
  }

  /**
   * Keeps the history as a string and the index at its length: called when the run may wait a long time (a
   * workflow task completed). A run that will wait at least `LONG_WAIT_MS` (or is closed) keeps it deflated.
   */
  compact(now: number): void {
    const { history, eventEnds } = this;
    if (typeof eventEnds !== 'number') {
      if (this.waitsLong(now)) {
        const bytes = historyBytes(history, 0, this.historySizeBytes);
        this.history = deflateHistory(this.workflowType, this.ownStrings, bytes, eventEnds, this.propertyEventIndexes ?? NOTHING);
        this.eventEnds = eventEnds.length;
        this.propertyEventIndexes = undefined;
      } else {
        if (Buffer.isBuffer(history)) this.history = history.toString('latin1', 0, this.historySizeBytes);
        this.eventEnds = eventEnds.slice();
      }
    }
    const kept: Collections = {};
    for (const [name, collection] of Object.entries(this.collections ?? {})) {
      if (collection.size) Object.assign(kept, { [name]: collection });
    }
    if (this.more) {
      this.more.collections = Object.keys(kept).length ? kept : undefined;
      if (this.more.atDefaults) this.more = undefined;
    }
  }

  /** Closed, or open with nothing to do until a timer at least `LONG_WAIT_MS` away (or a signal) wakes it. */
  private waitsLong(now: number): boolean {
    if (!this.open) return true;
    const { activities, children, updates } = this.collections ?? {};
    if (this.wft || this.held || activities?.size || children?.size || updates?.size) return false;
    return this.timers.every((timer) => timer.at - now >= LONG_WAIT_MS);
  }
}

/** A history's bytes from `from` to `to`: a view of a buffer, a copy from a string. */
function historyBytes(history: Buffer | string, from: number, to: number): Buffer {
  return Buffer.isBuffer(history) ? history.subarray(from, to) : Buffer.from(history.slice(from, to), 'latin1');
}
