/**
 * A database handle that writes down every statement it sends, for tests that hold a path to its number of round
 * trips (issue 15).
 *
 *   const statements: string[] = [];
 *   const counted = countingDatabase(url, statements, max?);   (a pool of its own, 2 connections unless `max`;
 *                                                              `counted.close()` in `after`)
 *   statements.length = 0; ...the path...; assert.equal(statements.length, n)
 *
 * Every statement is counted, Kysely's and a transaction's BEGIN/COMMIT alike, so a round trip that comes back shows.
 */
import { openDatabase, type DatabaseHandle } from '../../src/db';

export function countingDatabase(url: string, statements: string[], max = 2): DatabaseHandle {
  const handle = openDatabase(url, { max, applicationName: 'herald-test-round-trips' });
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
