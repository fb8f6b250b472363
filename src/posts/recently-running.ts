/**
 * The workflows this process knows to have been running in the last few minutes (issue 15): it started them, or a
 * periodic look described them running. The periodic reconcile looks at every post created since its last clean look
 * (about two minutes back), to catch one whose workflow never started (a failed start, a process that died between
 * the insert and the start), and at every scheduled post due within the next few minutes, to catch a workflow lost
 * while it waited; a post whose workflow this process saw start or run within the window needs neither look again
 * before it is overdue. Describing each of a burst's 10,000 new workflows at every look was CPU and garbage for
 * nothing, and so was describing a burst scheduled long ago at every look of its last minutes (2026-12-07).
 * Entries go once older than the window (5 minutes: two looks' reach and more; a look reaching further back after
 * failures describes the older posts, as it would without this), at every record and look, so this holds at most
 * the starts and sightings of one window: ~125 bytes each (10 minutes until 2026-11-27).
 */
export class RecentlyRunning {
  /** Workflow id → when it was last started or seen running (ms); oldest first. */
  private readonly seenAt = new Map<string, number>();

  constructor(
    private readonly windowMs = 5 * 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  record(workflowId: string): void {
    this.seenAt.delete(workflowId);
    this.seenAt.set(workflowId, this.now());
    this.forgetOld();
  }

  /** Whether this process started `workflowId`, or saw it running, within the window. */
  has(workflowId: string): boolean {
    this.forgetOld();
    return this.seenAt.has(workflowId);
  }

  /** Lets go of what is older than the window (the reconciler calls it before each look). */
  forgetOld(): void {
    const oldest = this.now() - this.windowMs;
    for (const [workflowId, at] of this.seenAt) {
      if (at > oldest) return;
      this.seenAt.delete(workflowId);
    }
  }
}
