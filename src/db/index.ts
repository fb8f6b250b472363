import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Database } from './schema';
import { defaultStalledStatementWatch, watchStalledStatements, type StalledStatementWatch } from './stalled-statements';

export type { Database } from './schema';
export type Db = Kysely<Database>;

const pools = new WeakMap<Db, pg.Pool>();

/**
 * The pool under a `Db` that `openDatabase` made (undefined for any other Kysely instance, a transaction's included):
 * `src/db/precompiled.ts` sends its named statements through it.
 */
export function poolOf(db: Db): pg.Pool | undefined {
  return pools.get(db);
}

export interface DatabaseHandle {
  db: Kysely<Database>;
  /** The same pool Kysely uses; shared with the rate limiter. */
  pool: pg.Pool;
  /** For connections outside the pool (the post change feed's LISTEN). */
  url: string;
  close(): Promise<void>;
}

/**
 * TCP keepalive from our end on every connection Herald holds (the pool's, the one-Herald lock's): a connection a NAT
 * or firewall dropped silently, or whose server host died, fails within about a minute of going quiet instead of
 * leaving its request (or the lock) waiting for the kernel's default of two hours.
 */
export const clientKeepAlive = { keepAlive: true, keepAliveInitialDelayMillis: 30_000 } as const;

/**
 * Kysely over one `pg` pool. `close` ends the pool (Kysely's destroy does it). `stalledStatements`: the watchdog's
 * timings (`src/db/stalled-statements.ts`; tests shorten them).
 */
export function openDatabase(url: string, options: { max?: number; applicationName?: string; stalledStatements?: StalledStatementWatch } = {}): DatabaseHandle {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    application_name: options.applicationName ?? 'herald',
    ...clientKeepAlive,
  });
  // An idle client losing its connection (database restart) must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  // Nor one checked out between two statements (a transaction awaiting its caller): the pool listens only while a
  // client is idle, and a FATAL then (a terminated backend, a restart) was an unhandled 'error' event. The client's
  // next statement fails with the connection, and the pool drops it when it comes back.
  pool.on('connect', (client) => client.on('error', () => undefined));
  // A statement on a connection cut before it was acknowledged fails within about a minute and a half, not ~15.
  const watchdog = watchStalledStatements(pool, url, options.stalledStatements ?? defaultStalledStatementWatch);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  pools.set(db, pool);
  let closed: Promise<void> | undefined;
  return {
    db,
    pool,
    url,
    close: () => {
      watchdog.stop();
      return (closed ??= db.destroy());
    },
  };
}
