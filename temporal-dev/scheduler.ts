// Everything that is due at a point in server time (timers, timeouts, retry backoffs, test-service sleeps) goes
// through this one min-heap. One real setTimeout is armed for the earliest entry; in time-skipping mode `poke()`
// additionally jumps the clock to the earliest entry whenever the server reports that it is idle.
import { Clock } from './clock';

export interface Scheduled {
  /** When it is due, in server time. */
  readonly at: number;
  cancel(): void;
}

/**
 * Something due at a point in server time, held in the scheduler's heap as itself and its own cancel handle: a
 * workflow timer is one of these (`timers.ts`), so a run waiting on one holds one object, not an entry, a closure
 * and its context (~140 bytes a waiting run, issue 15).
 */
export abstract class Due implements Scheduled {
  cancelled = false;
  /** Order among entries due at the same instant (set by the scheduler). */
  seq = 0;

  constructor(readonly at: number) {}

  cancel(): void {
    this.cancelled = true;
  }

  abstract fire(): void;
}

class Callback extends Due {
  constructor(
    at: number,
    private fn: (() => void) | undefined,
  ) {
    super(at);
  }

  fire(): void {
    this.fn?.();
  }

  /**
   * Lets go of the callback at once: a cancelled entry stays in the heap until it is due, and a workflow task's
   * timeout would keep the task (its ids, its transient events) alive for its 10 s after every completion.
   */
  override cancel(): void {
    super.cancel();
    this.fn = undefined;
  }
}

const MAX_TIMEOUT = 2 ** 31 - 1;

export class Scheduler {
  private heap: Due[] = [];
  private seq = 0;
  private armed: NodeJS.Timeout | undefined;
  private armedAt = Infinity;
  private pokePending = false;
  private closed = false;
  private readonly idleTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly clock: Clock,
    private readonly isIdle: () => boolean,
  ) {
    // Liveness of pollers changes with the passage of time alone, so re-check now and then.
    if (clock.timeSkipping) this.idleTimer = setInterval(() => this.poke(), 500).unref();
  }

  at(at: number, fn: () => void): Scheduled {
    return this.schedule(new Callback(at, fn));
  }

  schedule<T extends Due>(due: T): T {
    due.seq = this.seq++;
    this.push(due);
    if (due.at < this.armedAt) this.arm();
    this.poke();
    return due;
  }

  after(ms: number, fn: () => void): Scheduled {
    return this.at(this.clock.now() + ms, fn);
  }

  /** Schedules an idle check: if the time-skipping rules allow, jump to the next due entry. */
  poke(): void {
    if (!this.clock.timeSkipping || this.pokePending || this.closed) return;
    this.pokePending = true;
    setImmediate(() => {
      this.pokePending = false;
      this.skipIfIdle();
    });
  }

  close(): void {
    this.closed = true;
    if (this.armed) clearTimeout(this.armed);
    if (this.idleTimer) clearInterval(this.idleTimer);
    this.heap = [];
  }

  private skipIfIdle(): void {
    if (this.closed || !this.clock.unlocked || !this.isIdle()) return;
    this.dropCancelled();
    const next = this.heap[0];
    if (!next) return;
    this.clock.advanceTo(next.at);
    this.fireDue();
    this.poke();
  }

  private fireDue(): void {
    const now = this.clock.now();
    while (this.heap.length && this.heap[0]!.at <= now) {
      const entry = this.pop()!;
      if (entry.cancelled) continue;
      try {
        entry.fire();
      } catch (err) {
        // One broken timer must not take the server (or the `npm start` process hosting it) down.
        process.stderr.write(`temporal-dev: scheduled task failed: ${err instanceof Error ? err.stack : String(err)}\n`);
      }
    }
    this.arm();
  }

  private arm(): void {
    if (this.armed) clearTimeout(this.armed);
    this.armed = undefined;
    this.armedAt = Infinity;
    this.dropCancelled();
    const next = this.heap[0];
    if (!next || this.closed) return;
    this.armedAt = next.at;
    const delay = Math.min(Math.max(0, next.at - this.clock.now()), MAX_TIMEOUT);
    this.armed = setTimeout(() => {
      this.armedAt = Infinity;
      this.fireDue();
      this.poke();
    }, delay);
    this.armed.unref();
  }

  private dropCancelled(): void {
    while (this.heap.length && this.heap[0]!.cancelled) this.pop();
  }

  private less(a: Due, b: Due): boolean {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }

  private push(e: Due): void {
    const h = this.heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(h[i]!, h[p]!)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }

  private pop(): Due | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (h.length && last) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && this.less(h[l]!, h[m]!)) m = l;
        if (r < h.length && this.less(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top;
  }
}
