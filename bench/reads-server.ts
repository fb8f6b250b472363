// One side of `bench/reads.ts`, in its own process so its CPU time can be read from /proc:
//   node reads-server.js herald <database-url>   the real app (`createApp`), access logs at info on stdout
//   node reads-server.js bare <database-url>     node:http + pg, the same queries and nothing else
// Sends `{ port }` to the parent over IPC once it listens.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { createApp } from '../api/app';
import { parseConfig } from '../src/config';
import { openDatabase } from '../src/db';
import { createStdoutLogger } from '../src/logger';

const [role, databaseUrl] = process.argv.slice(2);
const encryptionKey = '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef';

/** The listing's query as Herald sends it (api/routes/posts-list.ts), the draft filter chosen by the caller. */
const listing = (statusClause: string) => `
  select posts.*, accounts.inactive_reason as account_inactive_reason
  from posts left join accounts on accounts.id = posts.account_id
  where posts.user_id = $1 and posts.promoted_to_id is null and ${statusClause} and posts.hidden = $3
  order by posts.created_at desc, posts.thread_id, posts.thread_order, posts.id desc
  limit $4 offset $5`;
const defaultListing = listing('posts.status != $2');
const statusListing = listing('posts.status = $2');
const onePost = `
  select posts.*, accounts.inactive_reason as account_inactive_reason
  from posts left join accounts on accounts.id = posts.account_id
  where posts.id = $1 and posts.user_id = $2`;

function startBare(): http.Server {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10, application_name: 'bench-bare' });
  return http.createServer(async (req, res) => {
    try {
      const url = new URL(req.url!, 'http://bare');
      const userId = url.searchParams.get('user')!;
      const post = /^\/posts\/([0-9a-f-]{36})$/.exec(url.pathname);
      const status = url.searchParams.get('status');
      const limit = Number(url.searchParams.get('limit') ?? 20);
      const result = post
        ? await pool.query(onePost, [post[1], userId])
        : await pool.query(status ? statusListing : defaultListing, [userId, status ?? 'draft', false, limit, 0]);
      if (post && result.rows.length === 0) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: post ? result.rows[0] : result.rows }));
    } catch (err) {
      res.writeHead(500).end(String(err));
    }
  });
}

function startHerald(): http.Server {
  const config = parseConfig({
    NODE_ENV: 'production',
    PORT: '0',
    HERALD_ENCRYPTION_KEY: encryptionKey,
    // Production mode requires one; reads fetch no media.
    HERALD_PUBLIC_URL: 'https://herald.invalid',
    LOG_LEVEL: 'info',
  });
  const { db, pool } = openDatabase(databaseUrl!, { max: 10, applicationName: 'herald-api' });
  const app = createApp({ config, db, pool, logger: createStdoutLogger('info') });
  process.on('message', (message: { plans?: boolean }) => {
    if (message.plans) void preparedPlans(pool).then((plans) => process.send!({ plans }));
  });
  return http.createServer(app);
}

/**
 * Plans of the named statements on each of the pool's connections (`pg_prepared_statements` is per connection, and
 * `pg_stat_statements` files Herald's statements under the bare handler's when their parse trees match): custom
 * plans past five mean PostgreSQL plans that statement on every call.
 */
async function preparedPlans(pool: pg.Pool) {
  const clients = await Promise.all(Array.from({ length: pool.totalCount }, () => pool.connect()));
  const byStatement = new Map<string, { connections: number; generic_plans: number; custom_plans: number }>();
  try {
    for (const client of clients) {
      const { rows } = await client.query<{ statement: string; generic_plans: string; custom_plans: string }>(
        'select statement, generic_plans, custom_plans from pg_prepared_statements',
      );
      for (const row of rows) {
        const key = row.statement.replace(/\s+/g, ' ').slice(-200);
        const entry = byStatement.get(key) ?? { connections: 0, generic_plans: 0, custom_plans: 0 };
        entry.connections += 1;
        entry.generic_plans += Number(row.generic_plans);
        entry.custom_plans += Number(row.custom_plans);
        byStatement.set(key, entry);
      }
    }
  } finally {
    for (const client of clients) client.release();
  }
  return [...byStatement].map(([statement, counts]) => ({ ...counts, statement }));
}

const server = role === 'bare' ? startBare() : startHerald();
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
process.on('disconnect', () => process.exit(0));
