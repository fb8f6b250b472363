import pg from 'pg';

/**
 * With the embedded Temporal server each `npm start` has a Temporal of its own, empty at start: a second process on
 * the same database would run its reconciler against it, find every post's workflow missing, and start a second
 * workflow per post (publishing twice). So such a process holds a session advisory lock on the database for its
 * whole life, on a connection of its own, and a second one refuses to start. Processes sharing a real Temporal
 * (TEMPORAL_ADDRESS) see the same workflows and take no lock.
 */

class AnotherHeraldRuns extends Error {
  constructor() {
    super(
      'Another Herald with the embedded Temporal server already runs on this database: a second one would start a ' +
        'second workflow for every post. Stop the other one, or run both against one Temporal cluster (TEMPORAL_ADDRESS).',
    );
    this.name = 'AnotherHeraldRuns';
  }
}

/** Resolves to what releases the lock (the connection closes), or rejects with `AnotherHeraldRuns`. */
export async function holdEmbeddedTemporalLock(url: string): Promise<() => Promise<void>> {
  const client = new pg.Client({ connectionString: url, application_name: 'herald-lock' });
  // A lost connection loses the lock; the process goes on (the pool's own connections say whether the database is there).
  client.on('error', () => undefined);
  await client.connect();
  try {
    const { rows } = await client.query<{ held: boolean }>(`select pg_try_advisory_lock(hashtextextended('herald.embedded-temporal', 0)) as held`);
    if (!rows[0].held) throw new AnotherHeraldRuns();
  } catch (err) {
    await client.end().catch(() => undefined);
    throw err;
  }
  return () => client.end();
}
