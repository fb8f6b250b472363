// The server's state: namespaces and their runs, the clock and scheduler, the task queues, and the bookkeeping
// that decides whether time may skip. Behaviour lives in the feature modules, which all take the Engine.
import { randomUUID } from 'node:crypto';
import { Clock } from './clock';
import { namespaceNotFound, notFound } from './errors';
import type { Msg } from './proto';
import type { Run } from './run';
import type { ActivityState } from './run-state';
import { Scheduler } from './scheduler';
import { TaskQueues } from './task-queues';

export interface Namespace {
  name: string;
  id: string;
  /**
   * The current (latest) run of each workflow id; earlier runs are in `runs` by run id. A list of every run per id
   * was ~55 bytes more per waiting run (issue 15), and only the latest was ever read by id.
   */
  currentRuns: Map<string, Run>;
  /**
   * Every run not yet forgotten by run id, in start order (a Map keeps its insertion order), which visibility lists
   * by: a list of all runs beside it was ~10 bytes more per waiting run (issue 15).
   */
  runs: Map<string, Run>;
  /** Custom search attributes added through OperatorService, with their IndexedValueType. */
  customSearchAttributes: Map<string, number>;
}

/** Closed runs are forgotten this long after closing (real-clock mode only), like a namespace's retention. */
export const RETENTION_MS = 24 * 3600 * 1000;

/** A task that was scheduled this recently blocks time skipping even before a worker has polled its queue. */
const WORKFLOW_TASK_GRACE_MS = 5_000;
const ACTIVITY_TASK_GRACE_MS = 1_000;

export class Engine {
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  readonly queues = new TaskQueues();
  readonly namespaces = new Map<string, Namespace>();
  /** Runs with a workflow task scheduled or running, with the real time it was scheduled. */
  readonly workflowTasks = new Map<Run, number>();
  /** Activities scheduled or running (not in retry backoff), with the real time they were queued. */
  readonly liveActivities = new Map<ActivityState, { run: Run; queuedAt: number }>();
  queriesInFlight = 0;
  readonly identity = 'temporal-dev';

  constructor(opts: { timeSkipping: boolean; namespace: string }) {
    this.clock = new Clock(opts.timeSkipping);
    this.scheduler = new Scheduler(this.clock, () => this.isIdle());
    this.registerNamespace(opts.namespace);
  }

  now(): number {
    return this.clock.now();
  }

  registerNamespace(name: string): Namespace {
    const existing = this.namespaces.get(name);
    if (existing) return existing;
    const ns: Namespace = {
      name,
      id: randomUUID(),
      currentRuns: new Map(),
      runs: new Map(),
      customSearchAttributes: new Map(),
    };
    this.namespaces.set(name, ns);
    return ns;
  }

  ns(name: string | undefined): Namespace {
    const ns = this.namespaces.get(name || 'default');
    if (!ns) throw namespaceNotFound(name ?? '');
    return ns;
  }

  /** The run named by a WorkflowExecution message; the current run when runId is empty. */
  findRun(namespace: string, execution: Msg | undefined): Run {
    const ns = this.ns(namespace);
    const workflowId: string = execution?.workflowId ?? '';
    const runId: string = execution?.runId ?? '';
    if (runId) {
      const run = ns.runs.get(runId);
      if (!run || run.workflowId !== workflowId) throw notFound(`workflow not found for ID: ${workflowId}`);
      return run;
    }
    const run = ns.currentRuns.get(workflowId);
    if (!run) throw notFound(`workflow not found for ID: ${workflowId}`);
    return run;
  }

  currentRun(namespace: string, workflowId: string): Run | undefined {
    return this.ns(namespace).currentRuns.get(workflowId);
  }

  /**
   * Time may skip only when no work is in flight that a worker is (or is about to be) handling: workflow tasks,
   * running activities and queries stop the clock from jumping, as in Temporal's Java test server.
   */
  isIdle(): boolean {
    if (this.queriesInFlight > 0) return false;
    const realNow = Date.now();
    for (const [run, scheduledAt] of this.workflowTasks) {
      if (run.wftRunning) return false;
      if (realNow - scheduledAt < WORKFLOW_TASK_GRACE_MS) return false;
      if (this.queues.hasLiveWorker(run.namespace, 'workflow', run.taskQueue)) return false;
    }
    for (const [activity, { run, queuedAt }] of this.liveActivities) {
      // A running activity keeps real time flowing (its timeouts must not fire in skipped time), as in Java's
      // test server; this holds during env.sleep() too.
      if (activity.state === 'started') return false;
      if (realNow - queuedAt < ACTIVITY_TASK_GRACE_MS) return false;
      if (this.queues.hasLiveWorker(run.namespace, 'activity', activity.attrs.taskQueue?.name ?? '')) return false;
    }
    return true;
  }

  encodeToken(token: Msg): Buffer {
    return Buffer.from(JSON.stringify(token));
  }

  decodeToken(buf: Uint8Array | undefined): Msg {
    try {
      return JSON.parse(Buffer.from(buf ?? []).toString('utf8')) as Msg;
    } catch {
      return {};
    }
  }

  /** Drops a closed run from every index (retention). */
  forgetRun(run: Run): void {
    const ns = this.namespaces.get(run.namespace);
    if (!ns || run.open || run.forgotten) return;
    run.forgotten = true;
    ns.runs.delete(run.runId);
    // Runs of one workflow id close in the order they started, so they are forgotten in that order too.
    if (ns.currentRuns.get(run.workflowId) === run) ns.currentRuns.delete(run.workflowId);
  }

  close(): void {
    this.scheduler.close();
  }
}
