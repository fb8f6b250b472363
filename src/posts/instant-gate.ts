/**
 * The held posts of one instant (`publishWhenDue`, README "Scheduled bursts"): they wake together, and each reports
 * back to its workflow only once every post held for the same instant in this process has been sent.
 *
 * One wake-up per instant, not one timer per hold: holds started at different moments compute their delays from
 * different readings of the clock, so their timers would end a millisecond or two apart, in different turns of the
 * event loop, and their claims would go out in several statements (`InstantClaims` gathers one turn's). With one
 * timer, every hold of the instant resumes in the same turn. The first hold's delay sets it; a later hold of the same
 * instant joins it (in production all of them read the same clock; see `publishWhenDue`).
 *
 * The report waits because it is not free: it starts an activity completion, a workflow task and (past the worker's
 * cache) a replay, on the same main thread as the sends; at :00 those would queue in front of the sends still to go.
 * The row is already recorded when a post waits there, so only its workflow's next step (first comment, media
 * cleanup) waits, for at most `maxWaitMs`.
 *
 *   const held = gate.enter(dueAt);        when the hold starts
 *   await held.untilDue(holdMs, signal);   resolves with the instant's other holds; rejects (AbortError) on `signal`
 *   held.leave();                          when the post is sent or will not be (again: no effect)
 *   await held.othersLeft(maxWaitMs);      resolves when the instant's last post left, or after maxWaitMs
 */
interface Instant {
  open: number;
  allLeft: Promise<void>;
  release: () => void;
  wake?: { reached: Promise<void>; timer: NodeJS.Timeout };
}

export class InstantGate {
  private readonly instants = new Map<number, Instant>();

  enter(at: number): { untilDue(holdMs: number, signal: AbortSignal): Promise<void>; leave(): void; othersLeft(maxWaitMs: number): Promise<void> } {
    let instant = this.instants.get(at);
    if (!instant) {
      let release!: () => void;
      const allLeft = new Promise<void>((done) => (release = done));
      instant = { open: 0, allLeft, release };
      this.instants.set(at, instant);
    }
    const mine = instant;
    mine.open++;
    let left = false;
    return {
      untilDue: (holdMs, signal) => {
        if (!mine.wake) {
          let timer!: NodeJS.Timeout;
          const reached = new Promise<void>((done) => (timer = setTimeout(done, holdMs)));
          mine.wake = { reached, timer };
        }
        return untilAborted(mine.wake.reached, signal);
      },
      leave: () => {
        if (left) return;
        left = true;
        if (--mine.open > 0) return;
        if (this.instants.get(at) === mine) this.instants.delete(at);
        // Every hold gone before the instant (a worker shutting down): no timer left to keep the process up.
        if (mine.wake) clearTimeout(mine.wake.timer);
        mine.release();
      },
      othersLeft: (maxWaitMs) => waitAtMost(mine.allLeft, maxWaitMs),
    };
  }
}

/** `reached`, or a rejection as `timers/promises` gives one when `signal` aborts first. */
function untilAborted(reached: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(abortError(signal));
  return new Promise<void>((done, failed) => {
    const onAbort = () => failed(abortError(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    void reached.then(() => {
      signal.removeEventListener('abort', onAbort);
      done();
    });
  });
}

function abortError(signal: AbortSignal): Error {
  return Object.assign(new Error('The operation was aborted', { cause: signal.reason }), { name: 'AbortError', code: 'ABORT_ERR' });
}

function waitAtMost(done: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const elapsed = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  return Promise.race([done, elapsed]).finally(() => clearTimeout(timer));
}
