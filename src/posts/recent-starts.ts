/**
 * The workflows this process started itself in the last few minutes (issue 15). The periodic reconcile looks at every
 * post created in the last 10 minutes, to catch one whose workflow never started (a failed start, a process that died
 * between the insert and the start); a post whose start this process saw succeed needs no such look, and describing
 * each of a burst's 10,000 new workflows every minute for 10 minutes was CPU and garbage for nothing.
 * Entries go once older than the window, so this holds at most the starts of one window.
 */
export class RecentStarts {
  /** Workflow id → when it was started (ms); in start order, so the oldest are first. */
  private readonly startedAt = new Map<string, number>();

  constructor(
    private readonly windowMs = 10 * 60_000,
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

  private forgetOld(): void {
    const oldest = this.now() - this.windowMs;
    for (const [workflowId, at] of this.startedAt) {
      if (at > oldest) return;
      this.startedAt.delete(workflowId);
    }
  }
}
