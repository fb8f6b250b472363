/**
 * The held posts of one instant (`publishWhenDue`, README "Scheduled bursts"), so that each reports back to its
 * workflow only once every post held for the same instant in this process has been sent, or after `maxWaitMs`.
 * A report is not free: it starts an activity completion, a workflow task and (past the worker's cache) a replay,
 * on the same main thread as the sends; at :00 those would queue in front of the sends still to go. The row is
 * already recorded when a post waits here, so only its workflow's next step (first comment, media cleanup) waits.
 *
 *   const held = gate.enter(dueAt);        when the hold starts
 *   held.leave();                          when the post is sent or will not be (again: no effect)
 *   await held.othersLeft(maxWaitMs);      resolves when the instant's last post left, or after maxWaitMs
 */
export class InstantGate {
  private readonly instants = new Map<number, { open: number; allLeft: Promise<void>; release: () => void }>();

  enter(at: number): { leave(): void; othersLeft(maxWaitMs: number): Promise<void> } {
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
      leave: () => {
        if (left) return;
        left = true;
        if (--mine.open > 0) return;
        if (this.instants.get(at) === mine) this.instants.delete(at);
        mine.release();
      },
      othersLeft: (maxWaitMs) => waitAtMost(mine.allLeft, maxWaitMs),
    };
  }
}

function waitAtMost(done: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const elapsed = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  return Promise.race([done, elapsed]).finally(() => clearTimeout(timer));
}
