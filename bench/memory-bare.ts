// The baseline of `bench/memory.ts`: a bare node:http + pg process (one client connection held open, one query
// per request), nothing else loaded. Sends `{ port }` to the parent over IPC once it listens.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';

const client = new pg.Client({ connectionString: process.argv[2], application_name: 'bench-bare' });
const server = http.createServer(async (req, res) => {
  try {
    const { rows } = await client.query('select id from posts where id = $1', [req.url!.slice(1)]);
    res.writeHead(rows.length ? 200 : 404, { 'content-type': 'application/json' }).end(JSON.stringify({ data: rows[0] ?? null }));
  } catch (err) {
    res.writeHead(500).end(String(err));
  }
});
client.connect().then(
  () => server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port })),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
process.on('disconnect', () => process.exit(0));
