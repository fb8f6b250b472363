import type { Socket } from 'node:net';
import pg from 'pg';

/**
 * A watchdog over a pool for a statement sent on a connection that a cut path will never answer: keepalive probes run
 * only while nothing is unacknowledged, so such a statement waits for TCP's retransmissions (~15 minutes; Node has no
 * `TCP_USER_TIMEOUT`), its request and its pool client with it (README "Running and operating", 2026-12-07 evening).
 * Not pg's `query_timeout` (the timed-out statement stays the client's active query, so the client stays blocked, and
 * it cuts a slow statement as readily as a dead one) nor a pool-wide `statement_timeout` (migrations and lock waits
 * may rightly take minutes).
 *
 * Nothing on the statement path: each sweep reads, per connection, its active query and its socket's `bytesRead`. A
 * connection whose same statement has been outstanding for `stalledMs` with no byte received is asked about over a
 * fresh connection (`pg_stat_activity` for its backend pid): backend gone (the server restarted, a failover moved the
 * address), not `active` for more than `idleGraceMs` (it never got the statement, or finished and cannot deliver),
 * or `active` waiting on `ClientWrite` (it cannot send us the answer): the socket is destroyed, the statement fails as
 * a lost connection and the pool drops the client. `active` otherwise is a statement running, however long: left.
 * The server unreachable: left too (nothing else works then; the next sweep or TCP's own reset ends it). Behind a
 * transaction pooler (PgBouncer) the pid is the pooler's, not a backend's: the first check finds the fresh
 * connection's own pid differs from `pg_backend_pid()` and switches the watchdog off for the pool.
 */
export interface StalledStatementWatch {
  sweepMs: number;
  stalledMs: number;
  idleGraceMs: number;
}

export const defaultStalledStatementWatch: StalledStatementWatch = { sweepMs: 30_000, stalledMs: 60_000, idleGraceMs: 10_000 };

/** pg's client as the watchdog reads it (fields pg 8 keeps; none of them public API). */
interface WatchedClient {
  processID: number | null;
  _activeQuery: object | null;
  connection: { stream: Socket };
}

interface Seen {
  query: object;
  bytesRead: number;
  since: number;
}

export function watchStalledStatements(
  pool: pg.Pool,
  url: string,
  watch: StalledStatementWatch = defaultStalledStatementWatch,
  onCut: (detail: { pid: number; reason: string; stalledMs: number }) => void = () => undefined,
): { stop(): void } {
  const clients = new Set<WatchedClient>();
  const seen = new WeakMap<WatchedClient, Seen>();
  pool.on('connect', (client) => void clients.add(client as unknown as WatchedClient));
  pool.on('remove', (client) => void clients.delete(client as unknown as WatchedClient));
  let off = false;
  let sweeping = false;

  const sweep = async () => {
    if (off || sweeping) return;
    sweeping = true;
    try {
      const now = Date.now();
      const suspects: Array<{ client: WatchedClient; stalledMs: number }> = [];
      for (const client of clients) {
        const query = client._activeQuery;
        const bytesRead = client.connection?.stream?.bytesRead ?? 0;
        const before = seen.get(client);
        if (!query) {
          seen.delete(client);
          continue;
        }
        if (!before || before.query !== query || before.bytesRead !== bytesRead) {
          seen.set(client, { query, bytesRead, since: now });
          continue;
        }
        if (now - before.since >= watch.stalledMs && client.processID !== null) suspects.push({ client, stalledMs: now - before.since });
      }
      if (suspects.length > 0) await askServer(suspects);
    } finally {
      sweeping = false;
    }
  };

  const askServer = async (suspects: Array<{ client: WatchedClient; stalledMs: number }>) => {
    const checker = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000, query_timeout: 10_000, application_name: 'herald-watchdog' });
    checker.on('error', () => undefined);
    try {
      await checker.connect();
      const own = await checker.query<{ pid: number }>('select pg_backend_pid() as pid');
      if (own.rows[0]?.pid !== (checker as unknown as WatchedClient).processID) {
        off = true; // a pooler between us and the server: its pids are not backends'
        return;
      }
      const pids = suspects.map((s) => s.client.processID!);
      const { rows } = await checker.query<{ pid: number; state: string | null; wait_event: string | null; still_ms: number }>(
        `select pid, state, wait_event, (extract(epoch from clock_timestamp() - state_change) * 1000)::float8 as still_ms
           from pg_stat_activity where pid = any($1::int[])`,
        [pids],
      );
      for (const { client, stalledMs } of suspects) {
        const row = rows.find((r) => r.pid === client.processID);
        const reason = !row
          ? 'its backend is gone'
          : row.state !== 'active' && row.still_ms > watch.idleGraceMs
            ? `its backend is ${row.state ?? 'not active'}: the statement never reached it, or its answer cannot`
            : row.state === 'active' && row.wait_event === 'ClientWrite'
              ? 'its backend cannot send the answer'
              : null;
        if (!reason || client._activeQuery !== seen.get(client)?.query) continue;
        onCut({ pid: client.processID!, reason, stalledMs });
        client.connection.stream.destroy(new Error(`the database connection stopped answering (${reason}; nothing received for ${Math.round(stalledMs / 1000)} s)`));
      }
    } catch {
      // The server unreachable, or the check itself failed: left alone (the next sweep asks again).
    } finally {
      const ended = checker.end().catch(() => undefined);
      const timer = setTimeout(() => (checker as unknown as WatchedClient).connection?.stream?.destroy(), 5_000);
      timer.unref();
      void ended.then(() => clearTimeout(timer));
    }
  };

  const timer = setInterval(() => void sweep(), watch.sweepMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
