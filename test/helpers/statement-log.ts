/**
 * A database pool whose every statement is recorded, for tests that count round trips or check their order:
 *
 *   countingDatabase(url, statements: string[]): DatabaseHandle
 *     Every statement the pool's connections send (Kysely's, and a transaction's `begin`/`commit`/`rollback` alike) is
 *     pushed to `statements` as its SQL text. Close the handle in `after`. Run one query per pool connection before
 *     clearing `statements` when the pool's first connects should not count.
 */
import { openDatabase, type DatabaseHandle } from '../../src/db';

export function countingDatabase(url: string, statements: string[]): DatabaseHandle {
  const handle = openDatabase(url, { max: 2, applicationName: 'herald-test-round-trips' });
  handle.pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      const text = args[0];
      statements.push(typeof text === 'string' ? text : String((text as { text?: string }).text ?? text));
      return query(...args);
    };
  });
  return handle;
}
