import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db';
import { createTestDatabase } from '../helpers/db';

/**
 * A pool connection lost while checked out between two statements (the database restarted, the embedded one was
 * killed, an operator ended the backend) fails that connection's next statement; it does not crash the process.
 */
describe('a checked-out pool connection whose backend ends', function () {
  this.timeout(60_000);

  it('fails its own next statement, and the pool goes on with a new connection', async () => {
    const database = await createTestDatabase();
    const handle = openDatabase(database.url, { max: 2 });
    try {
      const client = await handle.pool.connect();
      const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
      await sql`select pg_terminate_backend(${rows[0].pid})`.execute(database.db);
      await sleep(500);
      await assert.rejects(client.query('select 1'));
      client.release();
      const after = await sql<{ one: number }>`select 1 as one`.execute(handle.db);
      assert.deepEqual(after.rows, [{ one: 1 }]);
    } finally {
      await handle.close();
    }
  });
});
