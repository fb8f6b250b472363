// What a run keeps besides its history and timers, in the fewest fields of its own (issue 15: node's V8 has no
// pointer compression, so each field is 8 bytes of every run, and most runs wait for days): what runs of one kind
// share is one object (`kindOf`), and what is at its default while a run waits is made only while set (`Uncommon`).
// `Run` (run.ts) extends `RunFields`: the accessors keep the names the rest of temporal-dev reads and writes.
import type { Msg } from './proto';
import type { Collections, WorkflowTask } from './run-state';
import type { Scheduled } from './scheduler';

/**
 * The empty list every run without timers or run timeouts shares (frozen: those lists are replaced, never changed in
 * place), and what a run without held-back events reads. A waiting run has none of the first and rarely the last,
 * and an empty array of its own is 32 bytes each (issue 15).
 */
export const NOTHING: readonly never[] = Object.freeze([]);

/**
 * What every run of one namespace, workflow type, task queue and task timeout shares: one object (`kindOf`) where
 * each run had four fields of its own (issue 15).
 */
interface RunKind {
  readonly namespace: string;
  readonly workflowType: string;
  readonly taskQueue: string;
  readonly taskTimeoutMs: number;
}

const kinds = new Map<string, RunKind>();
/** Bounded: clients choose the names; past the bound a run gets a kind of its own. */
const KINDS_MAX = 1000;

export function kindOf(namespace: string, workflowType: string, taskQueue: string, taskTimeoutMs: number): RunKind {
  const key = `${namespace}\0${workflowType}\0${taskQueue}\0${taskTimeoutMs}`;
  const known = kinds.get(key);
  if (known) return known;
  const kind: RunKind = Object.freeze({ namespace, workflowType, taskQueue, taskTimeoutMs });
  if (kinds.size < KINDS_MAX) kinds.set(key, kind);
  return kind;
}

type ParentLink = { namespace: string; workflowId: string; runId: string; initiatedEventId: number };

/**
 * A run's state that is at its default (below) while the run waits on a timer: its workflow task, held-back events,
 * collections, the start attributes before the first append, a non-deflated history's property event indexes, and
 * what only some runs have (a parent, a start delay, run timeouts, a first run of their own, an expiry) or only
 * closed ones (close time, forgotten). Made on the first write of one of them (`Run.uncommon`), dropped by
 * `Run.compact()` when every one is back at its default: 14 fields, 112 bytes of every waiting run (issue 15).
 */
class Uncommon {
  startedBeforeAppend: Msg | undefined = undefined;
  propertyEventIndexes: number[] | undefined = undefined;
  closeTime = 0;
  wft: WorkflowTask | null = null;
  wftWanted = false;
  held: Array<() => void> | undefined = undefined;
  collections: Collections | undefined = undefined;
  runTimeouts: readonly Scheduled[] = NOTHING;
  cancelRequested = false;
  parent: ParentLink | undefined = undefined;
  startDelayMs = 0;
  forgotten = false;
  firstExecutionRunId: string | undefined = undefined;
  executionExpiry = 0;

  get atDefaults(): boolean {
    return (
      !this.startedBeforeAppend &&
      !this.propertyEventIndexes &&
      !this.closeTime &&
      !this.wft &&
      !this.wftWanted &&
      !this.held &&
      !this.collections &&
      !this.runTimeouts.length &&
      !this.cancelRequested &&
      !this.parent &&
      !this.startDelayMs &&
      !this.forgotten &&
      this.firstExecutionRunId === undefined &&
      !this.executionExpiry
    );
  }
}

/** The fields of a run other than its history, timers and ids (`Run` extends it). */
export abstract class RunFields {
  /** What runs of one namespace, workflow type, task queue and task timeout share (`kindOf`). */
  private readonly kind: RunKind;
  /**
   * The rest of the run's state, made when one of it leaves its default and dropped by `compact()` once all of it is
   * back (`Uncommon`): a run waiting on a timer has none of it, and each field of a run is 8 bytes (issue 15).
   */
  protected more: Uncommon | undefined = undefined;

  constructor(kind: RunKind) {
    this.kind = kind;
  }

  abstract readonly runId: string;

  get namespace(): string {
    return this.kind.namespace;
  }

  get workflowType(): string {
    return this.kind.workflowType;
  }

  get taskQueue(): string {
    return this.kind.taskQueue;
  }

  get taskTimeoutMs(): number {
    return this.kind.taskTimeoutMs;
  }

  get firstExecutionRunId(): string {
    return this.more?.firstExecutionRunId ?? this.runId;
  }

  get executionExpiry(): number {
    return this.more?.executionExpiry ?? 0;
  }

  /** The uncommon state, made on first write. */
  protected get uncommon(): Uncommon {
    return (this.more ??= new Uncommon());
  }

  /** The start event's attributes until that event is appended; from then on they are read from the history. */
  protected get startedBeforeAppend(): Msg | undefined {
    return this.more?.startedBeforeAppend;
  }

  /**
   * Indexes of the events that changed the memo or search attributes after the start (`PROPERTY_EVENTS`), if any:
   * those are read from the history (`properties`), not kept beside it (a second copy cost ~0.5 KiB a run).
   */
  protected get propertyEventIndexes(): number[] | undefined {
    return this.more?.propertyEventIndexes;
  }

  protected set propertyEventIndexes(indexes: number[] | undefined) {
    if (indexes || this.more) this.uncommon.propertyEventIndexes = indexes;
  }

  get closeTime(): number {
    return this.more?.closeTime ?? 0;
  }

  set closeTime(at: number) {
    this.uncommon.closeTime = at;
  }

  get wft(): WorkflowTask | null {
    return this.more?.wft ?? null;
  }

  set wft(task: WorkflowTask | null) {
    if (task || this.more) this.uncommon.wft = task;
  }

  /** Ask for another workflow task once the running one completes (e.g. an update arrived). */
  get wftWanted(): boolean {
    return this.more?.wftWanted ?? false;
  }

  set wftWanted(wanted: boolean) {
    if (wanted || this.more) this.uncommon.wftWanted = wanted;
  }

  /** Events held back while a workflow task runs (`holdBack`, `takeHeld`); none, mostly. */
  protected get held(): Array<() => void> | undefined {
    return this.more?.held;
  }

  protected set held(held: Array<() => void> | undefined) {
    if (held || this.more) this.uncommon.held = held;
  }

  /**
   * The run's collections are made when first used and dropped again by `compact()` when empty (with the object
   * that holds them, when all are): a waiting run mostly has none, and six empty Maps and Sets cost ~1.3 KiB a run
   * (issue 15).
   */
  protected get collections(): Collections | undefined {
    return this.more?.collections;
  }

  /** The run's run and execution timeouts, if it has any. */
  get runTimeouts(): readonly Scheduled[] {
    return this.more?.runTimeouts ?? NOTHING;
  }

  set runTimeouts(timeouts: readonly Scheduled[]) {
    if (timeouts.length || this.more) this.uncommon.runTimeouts = timeouts.length ? timeouts : NOTHING;
  }

  get cancelRequested(): boolean {
    return this.more?.cancelRequested ?? false;
  }

  set cancelRequested(requested: boolean) {
    if (requested || this.more) this.uncommon.cancelRequested = requested;
  }

  get parent(): ParentLink | undefined {
    return this.more?.parent;
  }

  set parent(parent: ParentLink | undefined) {
    if (parent || this.more) this.uncommon.parent = parent;
  }

  /** The start's delay: a small integer, where a second timestamp was a 16-byte heap number a run (issue 15). */
  get startDelayMs(): number {
    return this.more?.startDelayMs ?? 0;
  }

  set startDelayMs(delay: number) {
    if (delay || this.more) this.uncommon.startDelayMs = delay;
  }

  get forgotten(): boolean {
    return this.more?.forgotten ?? false;
  }

  set forgotten(forgotten: boolean) {
    if (forgotten || this.more) this.uncommon.forgotten = forgotten;
  }
}
