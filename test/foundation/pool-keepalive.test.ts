import assert from 'node:assert/strict';
import { Socket } from 'node:net';
import { openDatabase } from '../../src/db';
import { createTestDatabase } from '../helpers/db';

/**
 * The pool's connections have TCP keepalive on (README "Running and operating"): one a NAT or firewall cut silently
 * fails within about a minute of quiet instead of hanging its request until the kernel's two hours.
 */
describe('the main pool', function () {
  this.timeout(60_000);

  it('turns TCP keepalive on for each connection it opens', async () => {
    const database = await createTestDatabase();
    const calls: Array<{ socket: Socket; enable: boolean | undefined; delay: number | undefined }> = [];
    const original = Socket.prototype.setKeepAlive;
    Socket.prototype.setKeepAlive = function (this: Socket, enable?: boolean, delay?: number) {
      calls.push({ socket: this, enable, delay });
      return original.call(this, enable, delay);
    };
    const handle = openDatabase(database.url, { max: 1 });
    try {
      const client = await handle.pool.connect();
      try {
        // The socket the client talks over (pg keeps it on its connection).
        const socket = (client as unknown as { connection: { stream: Socket } }).connection.stream;
        const own = calls.filter((c) => c.socket === socket);
        assert.ok(own.some((c) => c.enable === true && c.delay === 30_000), `setKeepAlive calls on the pool's socket: ${JSON.stringify(own.map(({ enable, delay }) => ({ enable, delay })))}`);
      } finally {
        client.release();
      }
    } finally {
      Socket.prototype.setKeepAlive = original;
      await handle.close();
    }
  });
});
