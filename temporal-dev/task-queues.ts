// Task queues with long polls. A queued task is a thunk: `take()` turns it into a poll response at the moment a
// poller receives it (writing e.g. WorkflowTaskStarted), or returns null when the task went stale meanwhile.
import type { Msg } from './proto';

interface QueuedTask {
  take(poll: PollRequest): Msg | null;
}

export interface PollRequest {
  identity: string;
  requestId?: string;
}

export interface PollContext {
  cancelled(): boolean;
  onCancel(fn: () => void): void;
}

interface Waiter {
  poll: PollRequest;
  ctx: PollContext;
  resolve(response: Msg | null): void;
}

/** How long an idle poll is held before answering empty; sdk-core's own deadline is 70 s. */
export const LONG_POLL_MS = 20_000;
/** A queue counts as having a live worker when it was polled within this window. */
const POLLER_LIVENESS_MS = 3_000;
/**
 * DescribeTaskQueue lists a poller while it has a poll open or polled this recently (workers re-poll at once, so
 * a live one is never quiet for long). Shorter than the real server's 5 minutes: "No Workers Running" in the Web UI
 * should mean that soon after a worker stops.
 */
const POLLER_LISTED_MS = 10_000;

interface PollerInfo {
  identity: string;
  lastAccessTime: number;
}

class TaskQueue {
  private tasks: QueuedTask[] = [];
  private head = 0;
  private waiters: Waiter[] = [];
  lastPollAt = 0;
  private pollers = new Map<string, { lastAccessTime: number; open: number }>();

  private pollStarted(identity: string): void {
    const poller = this.pollers.get(identity) ?? { lastAccessTime: 0, open: 0 };
    poller.open++;
    poller.lastAccessTime = Date.now();
    this.pollers.set(identity, poller);
  }

  private pollEnded(identity: string): void {
    const poller = this.pollers.get(identity);
    if (!poller) return;
    poller.open = Math.max(0, poller.open - 1);
    poller.lastAccessTime = Date.now();
  }

  listPollers(now = Date.now()): PollerInfo[] {
    const out: PollerInfo[] = [];
    for (const [identity, poller] of this.pollers) {
      if (poller.open > 0 || now - poller.lastAccessTime < POLLER_LISTED_MS) out.push({ identity, lastAccessTime: poller.lastAccessTime });
      else this.pollers.delete(identity);
    }
    return out;
  }

  get hasLiveWorker(): boolean {
    return this.waiters.length > 0 || Date.now() - this.lastPollAt < POLLER_LIVENESS_MS;
  }

  offer(task: QueuedTask): void {
    while (this.waiters.length) {
      const waiter = this.waiters.shift()!;
      if (waiter.ctx.cancelled()) continue;
      const response = task.take(waiter.poll);
      if (!response) {
        this.waiters.unshift(waiter);
        return;
      }
      waiter.resolve(response);
      return;
    }
    this.tasks.push(task);
  }

  async poll(poll: PollRequest, ctx: PollContext, holdOnly = false): Promise<Msg | null> {
    this.pollStarted(poll.identity);
    try {
      return await this.takeOrWait(poll, ctx, holdOnly);
    } finally {
      this.pollEnded(poll.identity);
    }
  }

  private async takeOrWait(poll: PollRequest, ctx: PollContext, holdOnly: boolean): Promise<Msg | null> {
    this.lastPollAt = Date.now();
    while (!holdOnly && this.head < this.tasks.length) {
      const task = this.tasks[this.head]!;
      this.tasks[this.head++] = undefined as unknown as QueuedTask;
      if (this.head > 1024 && this.head * 2 > this.tasks.length) {
        this.tasks = this.tasks.slice(this.head);
        this.head = 0;
      }
      const response = task.take(poll);
      if (response) return response;
    }
    return await new Promise<Msg | null>((resolve) => {
      let done = false;
      const finish = (response: Msg | null) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        this.waiters = this.waiters.filter((w) => w !== waiter);
        this.lastPollAt = Date.now();
        resolve(response);
      };
      const waiter: Waiter = { poll, ctx, resolve: finish };
      const timer = setTimeout(() => finish(null), LONG_POLL_MS);
      ctx.onCancel(() => finish(null));
      if (!holdOnly) this.waiters.push(waiter);
    });
  }

  get backlog(): number {
    return this.tasks.length - this.head;
  }
}

export class TaskQueues {
  private queues = new Map<string, TaskQueue>();

  private queue(namespace: string, kind: 'workflow' | 'activity', name: string): TaskQueue {
    const key = `${namespace}\u0000${kind}\u0000${name}`;
    let q = this.queues.get(key);
    if (!q) {
      q = new TaskQueue();
      this.queues.set(key, q);
    }
    return q;
  }

  offer(namespace: string, kind: 'workflow' | 'activity', name: string, task: QueuedTask): void {
    this.queue(namespace, kind, name).offer(task);
  }

  poll(namespace: string, kind: 'workflow' | 'activity', name: string, poll: PollRequest, ctx: PollContext, holdOnly = false) {
    return this.queue(namespace, kind, name).poll(poll, ctx, holdOnly);
  }

  pollers(namespace: string, kind: 'workflow' | 'activity', name: string): PollerInfo[] {
    return this.queue(namespace, kind, name).listPollers();
  }

  hasLiveWorker(namespace: string, kind: 'workflow' | 'activity', name: string): boolean {
    return this.queue(namespace, kind, name).hasLiveWorker;
  }
}
