/**
 * The workflows this process started itself in the last few minutes (issue 15). The periodic reconcile looks at every
 * post created since its last clean look (about two minutes back), to catch one whose workflow never started (a failed
 * start, a process that died between the insert and the start); a post whose start this process saw succeed needs no
 * such look, and describing each of a burst's 10,000 new workflows at every look was CPU and garbage for nothing.
 * Entries go once older than the window (5 minutes: two looks' reach and more; a look reaching further back after
 * failures describes the older posts, as it would without this), at every record and look, so this holds at most
 * the starts of one window (10 minutes until 2026-11-27): 65–150 bytes a start, its id kept as a flat copy.
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
    this.startedAt.set(flatCopy(workflowId), this.now());
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

/**
 * The same characters in one flat string. An id made by `randomUUID` (Node builds it by concatenating 20 pieces) and
 * prefixed is a tree of ~15 V8 cons strings, ~590 bytes held where the 41 characters need 64: 10,000 scheduled posts'
 * starts kept 5.9 MiB for their window (issue 15, memory per waiting post).
 */
function flatCopy(text: string): string {
  return Buffer.from(text, 'utf8').toString('utf8');
}
