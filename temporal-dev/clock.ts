// The server's notion of "now". Real time flows in both modes; in time-skipping mode the clock can also jump
// forward (`offset`) when the time-skipping rules allow it. The lock counter follows the Java test server:
// it starts at 1 (locked) and the time-skipping client unlocks around `result()`.
import { failedPrecondition } from './errors';

export class Clock {
  private offsetMs = 0;
  private lockCount = 1;
  /** Callers inside UnlockTimeSkippingWithSleep / SleepUntil-style waits that explicitly ask time to move. */
  sleepers = 0;

  constructor(readonly timeSkipping: boolean) {}

  now(): number {
    return Date.now() + this.offsetMs;
  }

  advanceTo(ms: number): void {
    const delta = ms - this.now();
    if (delta > 0) this.offsetMs += delta;
  }

  lock(): void {
    this.lockCount++;
  }

  unlock(): void {
    if (this.lockCount <= 0) throw failedPrecondition('Unbalanced lock and unlock calls');
    this.lockCount--;
  }

  /** Time may jump only when nobody holds the lock, or somebody is explicitly sleeping. */
  get unlocked(): boolean {
    return this.timeSkipping && (this.lockCount === 0 || this.sleepers > 0);
  }
}
