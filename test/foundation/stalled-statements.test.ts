import assert from 'node:assert/strict';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db';
import { createTestDatabase, type TestDatabase } from '../helpers/db';

/**
 * A statement sent on a connection whose path was cut before it was acknowledged fails within the watchdog's bound and
 * the pool goes on with a new connection (README "Running and operating", 2026-12-07 evening); before, it waited for
 * TCP's retransmissions (~15 minutes). A statement the server is running, however long, is left alone.
 */
describe('the pool watchdog for a statement on a cut connection', function () {
  this.timeout(60_000);
  let database: TestDatabase;
  let proxy: CuttingProxy;

  before(async () => {
    database = await createTestDatabase({ migrate: false });
    proxy = await startCuttingProxy(new URL(database.url));
  });
  after(async () => {
    await proxy?.close();
    await database?.close();
  });

  // Sweeps every 200 ms; a statement 1.5 s without a byte back is asked about; idle for 0.5 s means never received.
  const watch = { sweepMs: 200, stalledMs: 1_500, idleGraceMs: 500 };

  it('fails the statement within its bound once the path stops carrying bytes, and the next statement runs on a new connection', async () => {
    const handle = openDatabase(proxy.url(database.url), { max: 1, stalledStatements: watch });
    try {
      assert.equal((await sql<{ n: number }>`select 1 as n`.execute(handle.db)).rows[0]?.n, 1);
      await new Promise((r) => setTimeout(r, 800)); // its backend idle past the grace
      proxy.cutAll(); // a NAT dropped the flow: nothing passes either way, nothing is closed
      const started = Date.now();
      const outcome = await Promise.race([
        sql`select 2 as n`.execute(handle.db).then(
          () => 'answered',
          (err: Error) => err.message,
        ),
        new Promise<string>((r) => setTimeout(() => r('still waiting after 15 s'), 15_000)),
      ]);
      const elapsed = Date.now() - started;
      assert.match(outcome, /the database connection stopped answering/);
      assert.ok(elapsed < 5_000, `failed within the bound: ${elapsed} ms`);
      // The pool dropped the cut client: the next statement connects again (the proxy carries new connections).
      assert.equal((await sql<{ n: number }>`select 3 as n`.execute(handle.db)).rows[0]?.n, 3);
    } finally {
      await handle.close();
    }
  });

  it('leaves a statement the server is running alone, however long it is quiet', async () => {
    const handle = openDatabase(proxy.url(database.url), { max: 1, stalledStatements: watch });
    try {
      const started = Date.now();
      const rows = (await sql<{ n: number }>`select 4 as n from pg_sleep(3)`.execute(handle.db)).rows;
      assert.equal(rows[0]?.n, 4);
      assert.ok(Date.now() - started >= 3_000);
    } finally {
      await handle.close();
    }
  });
});

interface CuttingProxy {
  url(databaseUrl: string): string;
  /** Every connection open now stops forwarding in both directions, without closing (new ones forward). */
  cutAll(): void;
  close(): Promise<void>;
}

async function startCuttingProxy(target: URL): Promise<CuttingProxy> {
  const pairs = new Set<{ cut: boolean; sockets: Socket[] }>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    const pair = { cut: false, sockets: [client, upstream] };
    pairs.add(pair);
    client.on('data', (chunk) => void (pair.cut || upstream.write(chunk)));
    upstream.on('data', (chunk) => void (pair.cut || client.write(chunk)));
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url(databaseUrl) {
      const url = new URL(databaseUrl);
      url.hostname = '127.0.0.1';
      url.port = String(port);
      return url.toString();
    },
    cutAll() {
      for (const pair of pairs) pair.cut = true;
    },
    async close() {
      for (const pair of pairs) for (const socket of pair.sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
