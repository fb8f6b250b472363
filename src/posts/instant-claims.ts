/**
 * The claims of posts held for one instant (`publishWhenDue`), gathered and made together: every claim asked for in
 * the same turn of the event loop for the same instant goes into one statement per `batchSize` posts
 * (`claimAllScheduledAt`). At :00 a burst's holds all end in the same few milliseconds; one statement per post meant
 * building, sending and answering thousands of statements on the main thread before the first sends.
 *
 *   const claims = new InstantClaims((ids, at) => claimAllScheduledAt(db, ids, at), 100);
 *   const row = await claims.claim(postId, dueAt);   the row taken, or undefined; rejects if its statement failed
 */
export class InstantClaims<Row extends { id: string }> {
  private readonly pending = new Map<number, Array<{ postId: string; done: (row: Row | undefined) => void; failed: (err: unknown) => void }>>();

  constructor(
    private readonly claimAll: (postIds: string[], at: Date) => Promise<Row[]>,
    private readonly batchSize: number,
  ) {}

  claim(postId: string, at: number): Promise<Row | undefined> {
    return new Promise((done, failed) => {
      let waiting = this.pending.get(at);
      if (!waiting) {
        waiting = [];
        this.pending.set(at, waiting);
        setImmediate(() => this.flush(at));
      }
      waiting.push({ postId, done, failed });
    });
  }

  private flush(at: number): void {
    const waiting = this.pending.get(at) ?? [];
    this.pending.delete(at);
    for (let i = 0; i < waiting.length; i += this.batchSize) {
      const batch = waiting.slice(i, i + this.batchSize);
      this.claimAll([...new Set(batch.map((w) => w.postId))], new Date(at)).then(
        (rows) => {
          const taken = new Map(rows.map((row) => [row.id, row]));
          // A post asked twice in one batch (two holds of one post) is taken once: the first asking gets it.
          for (const w of batch) {
            w.done(taken.get(w.postId));
            taken.delete(w.postId);
          }
        },
        (err) => batch.forEach((w) => w.failed(err)),
      );
    }
  }
}
