// One side of `bench/posts.ts`, in its own process so its CPU time can be read from /proc:
//   node posts-server.js herald <database-url> <x-origin> <temporal-address>
//       the API and the worker in one process, as `npm start` runs them (src/main.ts): `startTemporal` (the
//       production worker options, eager start on the shared connection), the change feed, `createApp`, access logs
//       at info on stdout
//   node posts-server.js bare <database-url> <x-origin> <account-id>
//       node:http + pg: insert the row, the same x adapter call, record the result; nothing else (POST /thread: the
//       same for a thread's parts, sent one after the other)
//   node posts-server.js herald-sdk-watchdog ...   herald with the SDK's own Worker (a vm watchdog thread per call into
//       the workflow sandbox), on a task queue of its own
//   node posts-server.js floor[-sdk-watchdog] <database-url> <x-origin> <temporal-address> <account-id>
//       the smallest workflow-backed publish on the same stack (bench/posts-floor.ts)
// Sends `{ port }` to the parent over IPC once it listens.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Worker } from '@temporalio/worker';
import { createApp } from '../api/app';
import { parseConfig } from '../src/config';
import { createSealedBox } from '../src/crypto/sealed-box';
import { openDatabase } from '../src/db';
import { createStdoutLogger } from '../src/logger';
import { createHttpClient } from '../src/net/http';
import { createPlatformAdapters } from '../src/platforms/registry';
import { loadPlatformContext } from '../src/posts/accounts-port';
import { startPostChangeFeed } from '../src/posts/change-feed';
import { startDatabaseNotifications } from '../src/db/notifications';
import { createPostsRuntime } from '../src/posts/runtime';
import { registerSearchAttributes } from '../src/temporal/search-attributes';
import { startTemporal } from '../src/temporal/worker';
import { startFloor } from './posts-floor';

const [role, databaseUrl, xOrigin, fourth, fifth] = process.argv.slice(2) as [string, string, string, string, string?];
const encryptionKey = '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef';

const config = parseConfig({
  NODE_ENV: 'production',
  PORT: '0',
  HERALD_ENCRYPTION_KEY: encryptionKey,
  HERALD_ALLOW_INSECURE_URLS: 'true',
  HERALD_X_API_URL: xOrigin,
  LOG_LEVEL: 'info',
});
const platformHttp = createHttpClient({ allowInsecure: true, timeoutMs: 10_000 });
const adapters = createPlatformAdapters({ http: platformHttp, platformUrls: config.platformUrls, allowInsecureUrls: true });
const sealedBox = createSealedBox(Buffer.from(encryptionKey, 'hex'));

async function startBare(accountId: string): Promise<http.Server> {
  const { db, pool } = openDatabase(databaseUrl, { max: 40, applicationName: 'bench-bare' });
  const { ctx } = await loadPlatformContext(db, sealedBox, accountId);
  const { rows } = await pool.query<{ user_id: string }>('select user_id from accounts where id = $1', [accountId]);
  const userId = rows[0]!.user_id;
  // A thread: its rows in one insert, the parts sent one after the other (each replying to the previous), one update.
  async function bareThread(text: string, parts: number): Promise<{ ids: string[] }> {
    const texts = Array.from({ length: parts }, (_, k) => `${text} part ${k + 1}`);
    const inserted = await pool.query<{ id: string }>(
      `insert into posts (user_id, account_id, platform, text, status, thread_id, thread_order)
       select $1, $2, 'x', t.text, 'publishing', $4, t.ord from unnest($3::text[]) with ordinality as t(text, ord) returning id`,
      [userId, accountId, texts, randomUUID()],
    );
    const ids = inserted.rows.map((r) => r.id);
    const published: Array<{ platformPostId: string; url: string | null }> = [];
    for (const [k, id] of ids.entries()) {
      const previous = published[k - 1];
      const replyTo = previous ? { platformPostId: previous.platformPostId, rootPlatformPostId: published[0]!.platformPostId } : undefined;
      published.push(await adapters.x.publish(ctx, { postId: id, text: texts[k]!, media: [], ...(replyTo ? { replyTo } : {}) }));
    }
    await pool.query(
      `update posts set status = 'published', platform_post_id = p.pid, platform_post_url = p.url
       from unnest($1::uuid[], $2::text[], $3::text[]) as p(id, pid, url) where posts.id = p.id`,
      [ids, published.map((p) => p.platformPostId), published.map((p) => p.url)],
    );
    return { ids };
  }
  return http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString()) as { text: string; parts?: number };
        if (req.url === '/thread') {
          res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ data: await bareThread(body.text, body.parts ?? 3) }));
          return;
        }
        const inserted = await pool.query<{ id: string }>(
          `insert into posts (user_id, account_id, platform, text, status) values ($1, $2, 'x', $3, 'publishing') returning id`,
          [userId, accountId, body.text],
        );
        const id = inserted.rows[0]!.id;
        const published = await adapters.x.publish(ctx, { postId: id, text: body.text, media: [] });
        await pool.query(`update posts set status = 'published', platform_post_id = $2, platform_post_url = $3 where id = $1`, [id, published.platformPostId, published.url]);
        res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ data: { id } }));
      } catch (err) {
        res.writeHead(500).end(String(err));
      }
    });
  });
}

async function startHerald(temporalAddress: string, sdkWatchdog: boolean): Promise<http.Server> {
  const logger = createStdoutLogger('info');
  const database = openDatabase(databaseUrl, { applicationName: 'herald-api' });
  // Each Herald side polls its own task queue, so no side runs another's workflow tasks.
  // As `npm start` wires them: the worker tells the feed the API waits on what it records.
  const notifications = startDatabaseNotifications(databaseUrl, logger);
  await notifications.ready;
  const changes = startPostChangeFeed(notifications);
  const overrides = { adapters, sealedBox, http: platformHttp, changes, ...(sdkWatchdog ? { taskQueue: 'herald-sdk-watchdog' } : {}) };
  const temporal = await startTemporal(temporalAddress, config.temporal.namespace, { config, db: database.db, logger, posts: overrides }, sdkWatchdog ? { workerClass: Worker, taskQueue: 'herald-sdk-watchdog' } : {});
  await registerSearchAttributes(temporal.client, config.temporal.namespace, logger);
  const posts = createPostsRuntime({ config, db: database.db, logger, temporal: temporal.client }, overrides);
  const app = createApp({ config, db: database.db, pool: database.pool, logger, temporal: temporal.client, adapters, sealedBox, posts, keyCache: { notifications } });
  process.on('disconnect', () => void temporal.shutdown().finally(() => process.exit(0)));
  return http.createServer(app);
}

async function startFloorSide(temporalAddress: string, accountId: string, sdkWatchdog: boolean): Promise<http.Server> {
  const { db } = openDatabase(databaseUrl, { max: 1, applicationName: 'bench-floor-setup' });
  const { ctx } = await loadPlatformContext(db, sealedBox, accountId);
  await db.destroy();
  return startFloor({ databaseUrl, temporalAddress, accountId, x: adapters.x, ctx, sdkWatchdog });
}

async function main(): Promise<void> {
  const server =
    role === 'bare'
      ? await startBare(fourth)
      : role.startsWith('floor')
        ? await startFloorSide(fourth, fifth!, role === 'floor-sdk-watchdog')
        : await startHerald(fourth, role === 'herald-sdk-watchdog');
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
  if (role === 'bare') process.on('disconnect', () => process.exit(0));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
