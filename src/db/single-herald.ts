import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import pg from 'pg';
import type { Logger } from '../logger';
import { clientKeepAlive, type Db } from './index';

/**
 * With the embedded Temporal server each `npm start` has a Temporal of its own, empty at start: a second process on
 * the same database would run its reconciler against it, find every post's workflow missing, and start a second
 * workflow per post (publishing twice). So such a process holds a session advisory lock on the database for its
 * whole life, on a connection of its own, and a second one refuses to start. Processes sharing a real Temporal
 * (TEMPORAL_ADDRESS) see the same workflows and take no lock.
 *
 * A session lock lives as long as its connection: a PostgreSQL restart or failover, a terminated backend or a
 * dropped idle connection releases it, and a second `npm start` would then succeed beside this one. So a lost
 * connection re-takes the lock at once on a new one; when another process holds it by then, or it cannot be
 * re-taken within `retakeWithinMs`, the lock is lost for good (`lost` settles) and the process must stop.
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

interface EmbeddedTemporalLock {
  /**
   * Settles, with why, only if the lock is lost while held and could not be re-taken (another process took it, or
   * the database did not answer in time): this process then runs beside a possible second Herald and must stop.
   */
  lost: Promise<Error>;
  /** Releases the lock (its connection closes); `lost` never settles after. */
  release(): Promise<void>;
  /**
   * Names the embedded Temporal server's address on the lock's connection (now and after every re-take), so that
   * `herald posts stuck` can ask the workflows of the Herald that runs (`runningEmbeddedTemporal`).
   */
  announce(temporalAddress: string): Promise<void>;
}

/**
 * How long a lost lock connection is retried (a PostgreSQL restart takes a few seconds) before the process gives up
 * the database to whoever takes the lock next: past this, running on would be running unguarded.
 */
const retakeWithinMs = 15_000;
const retakeDelayMs = 500;

/**
 * TCP keepalive on both ends of the lock's connection. Ours (`clientKeepAlive`, as the pool's) notices a dead server
 * or a silently dropped connection (a NAT or firewall forgetting an idle one) within a minute, not never; the server's
 * (`tcp_keepalives_*`, settable per session) ends the session of a host that crashed within ~1 min, instead of holding
 * the lock for the kernel's default two hours and refusing every restart meanwhile.
 */
const serverKeepalives = 'set tcp_keepalives_idle = 30; set tcp_keepalives_interval = 10; set tcp_keepalives_count = 3';

/** The lock's key (exported for the tests, which take it as another process would). */
export const lockKey = "hashtextextended('herald.embedded-temporal', 0)";
const tryLock = `select pg_try_advisory_lock(${lockKey}) as held`;

/**
 * The lock's connection is named `herald-lock`, and `herald-lock temporal=<host:port>` once the embedded Temporal
 * listens: the one place another process (the operator command) can learn where the running Herald's workflows are.
 * Within PostgreSQL's 63 characters (`127.0.0.1:65535` makes 36).
 */
const lockApplicationName = 'herald-lock';
const announcedPrefix = `${lockApplicationName} temporal=`;

/** Resolves once the lock is held, or rejects with `AnotherHeraldRuns`. */
export async function holdEmbeddedTemporalLock(
  url: string,
  options: { logger?: Logger; retakeWithinMs?: number } = {},
): Promise<EmbeddedTemporalLock> {
  const log = options.logger;
  const retakeMs = options.retakeWithinMs ?? retakeWithinMs;
  let released = false;
  let lose!: (err: Error) => void;
  const lost = new Promise<Error>((resolve) => (lose = resolve));
  let applicationName = lockApplicationName;
  let client = await takeLock(url, applicationName);

  const retake = async (cause: Error | undefined) => {
    log?.warn({ err: cause }, 'the connection holding the one-Herald lock was lost; taking the lock again');
    for (const deadline = Date.now() + retakeMs; !released; await sleep(retakeDelayMs)) {
      try {
        const next = await takeLock(url, applicationName);
        if (released) return void (await next.end().catch(() => undefined));
        client = next;
        watch(next);
        return void log?.info('the one-Herald lock is held again');
      } catch (err) {
        if (err instanceof AnotherHeraldRuns) return lose(err);
        if (Date.now() >= deadline) {
          return lose(new Error(`The one-Herald lock was lost and could not be taken again within ${retakeMs} ms: ${(err as Error).message}`));
        }
      }
    }
  };
  function watch(held: pg.Client): void {
    let gone = false;
    // A cut connection errors and then ends; a server that closes it cleanly only ends it.
    const onGone = (err?: Error) => {
      if (gone || released) return;
      gone = true;
      held.end().catch(() => undefined);
      void retake(err);
    };
    held.on('error', onGone);
    held.on('end', () => onGone());
  }
  watch(client);
  return {
    lost,
    release: async () => {
      released = true;
      await client.end();
    },
    announce: async (temporalAddress) => {
      // Set before the statement: a re-take under way, or the next one, connects with the name.
      applicationName = `${announcedPrefix}${temporalAddress}`;
      await client.query(`select set_config('application_name', $1, false)`, [applicationName]).catch((err: unknown) => {
        log?.warn({ err }, 'could not name the embedded Temporal on the one-Herald lock; `herald posts stuck` judges from the database until the lock is taken again');
      });
    },
  };
}

/**
 * The embedded Temporal server of the Herald that holds the lock on this database, when that Herald announced it and
 * connects from the same address as this process (its `127.0.0.1:<port>` is this host's loopback only then); else
 * null: no Herald with the embedded Temporal runs on this database, or it runs on another host.
 */
export async function runningEmbeddedTemporal(db: Db): Promise<string | null> {
  const { rows } = await sql<{ application_name: string }>`
    select a.application_name from pg_locks l join pg_stat_activity a on a.pid = l.pid
    where l.locktype = 'advisory' and l.granted and l.objsubid = 1
      and l.database = (select oid from pg_database where datname = current_database())
      and ((l.classid::int8 << 32) | l.objid::int8) = ${sql.raw(lockKey)}
      and a.client_addr is not distinct from (select client_addr from pg_stat_activity where pid = pg_backend_pid())`.execute(db);
  const name = rows[0]?.application_name;
  return name?.startsWith(announcedPrefix) ? name.slice(announcedPrefix.length) : null;
}

async function takeLock(url: string, applicationName: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, application_name: applicationName, ...clientKeepAlive });
  // Errors here reject the calls below; once held, `watch` listens for the connection's loss.
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query(serverKeepalives);
    const { rows } = await client.query<{ held: boolean }>(tryLock);
    if (!rows[0].held) throw new AnotherHeraldRuns();
  } catch (err) {
    await client.end().catch(() => undefined);
    throw err;
  }
  return client;
}
