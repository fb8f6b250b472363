/**
 * The claims of posts held for one instant (`publishWhenDue`), gathered and made together: every claim asked for in
 * the same turn of the event loop for the same instant goes into one statement per `batchSize` posts
 * (`claimAllScheduledAt`). At :00 a burst's holds all end in the same few milliseconds; one statement per post meant
 * building, sending and answering thousands of statements on the main thread before the first sends.
 *
 *   const claims = new InstantClaims((ids, at, versions) => claimAllScheduledAt(db, ids, at, versions), 100);
 *   const row = await claims.claim(postId, dueAt, version);   the row taken, or undefined; rejects if its statement failed
 *
 * `version`: the post's `schedule_version` its hold was given (migration 0252). Two holds of one post in one batch (a
 * stale one, abandoned by a reschedule away and back to the same instant, and the current one) are claimed once, at
 * the higher version (versions only grow, so the hold that read the row last), and the row goes to the hold of the
 * version it was taken at, never to the stale one (a thread's claim reports its parts' shared version as the row's).
 * Rows without a `schedule_version` go to the first asking.
 */
export class InstantClaims<Row extends { id: string; schedule_version?: number }> {
  private readonly pending = new Map<number, Array<{ postId: string; version: number; done: (row: Row | undefined) => void; failed: (err: unknown) => void }>>();

  constructor(
    private readonly claimAll: (postIds: string[], at: Date, versions: Record<string, number>) => Promise<Row[]>,
    private readonly batchSize: number,
  ) {}

  claim(postId: string, at: number, version = 0): Promise<Row | undefined> {
    return new Promise((done, failed) => {
      let waiting = this.pending.get(at);
      if (!waiting) {
        waiting = [];
        this.pending.set(at, waiting);
        setImmediate(() => this.flush(at));
      }
      waiting.push({ postId, version, done, failed });
    });
  }

  private flush(at: number): void {
    const waiting = this.pending.get(at) ?? [];
    this.pending.delete(at);
    for (let i = 0; i < waiting.length; i += this.batchSize) {
      const batch = waiting.slice(i, i + this.batchSize);
      const versions: Record<string, number> = {};
      for (const w of batch) versions[w.postId] = Math.max(versions[w.postId] ?? w.version, w.version);
      this.claimAll(Object.keys(versions), new Date(at), versions).then(
        (rows) => {
          const taken = new Map(rows.map((row) => [row.id, row]));
          // A post asked twice in one batch is taken once, by the hold of the version it was taken at.
          for (const w of batch) {
            const row = taken.get(w.postId);
            if (row && (row.schedule_version === undefined || row.schedule_version === w.version)) {
              w.done(row);
              taken.delete(w.postId);
            } else w.done(undefined);
          }
        },
        (err) => batch.forEach((w) => w.failed(err)),
      );
    }
  }
}
