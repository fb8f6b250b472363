/**
 * The workflows this process started itself in the last few minutes (issue 15). The periodic reconcile looks at every
 * post created since its last clean look (about two minutes back), to catch one whose workflow never started (a failed
 * start, a process that died between the insert and the start); a post whose start this process saw succeed needs no
 * such look, and describing each of a burst's 10,000 new workflows at every look was CPU and garbage for nothing.
 * Entries go once older than the window (5 minutes: two looks' reach and more; a look reaching further back after
 * failures describes the older posts, as it would without this), at every record and look, so this holds at most
 * the starts of one window: ~125 bytes a start (10 minutes until 2026-11-27).
 */
export class RecentStarts {
  /** Workflow id → when it was started (ms); in start order, so the oldest are first. */
  private readonly startedAt = new Map<string, number>();

  constructor(
    private readonly windowMs = 5 * 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  record(workflowId: string): void {
    this.startedAt.delete(workflowId);
    this.startedAt.set(workflowId, this.now());
    this.forgetOld();
  }

  /** Whether this process started `workflowId` within the window. */
  has(workflowId: string): boolean {
    this.forgetOld();
    return this.startedAt.has(workflowId);
  }

  /** Lets go of the starts older than the window (the reconciler calls it before each look). */
  forgetOld(): void {
    const oldest = this.now() - this.windowMs;
    for (const [workflowId, at] of this.startedAt) {
      if (at > oldest) return;
      this.startedAt.delete(workflowId);
    }
  }
}
