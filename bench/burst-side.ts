// One side of `bench/burst.ts`, in its own process so its CPU time can be read from /proc:
//   node burst-side.js herald   `startHerald` as `npm start` runs it: in-process temporal-dev, the worker on task
//                               queue `herald` with its production options, the API; sends `{ url }` over IPC
//   node burst-side.js bare     the baseline scheduler: at `at` (ms, from IPC) it claims every due row in bulk
//                               (`for update skip locked`, 100 at a time) and calls the platform for each, at most
//                               32 at once, recording each as published; sends `{ done }` when none are left
// Configuration comes from the environment (DATABASE_URL, HERALD_X_API_URL, HERALD_ENCRYPTION_KEY ...).
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { parseConfig } from '../src/config';
import { createSealedBox } from '../src/crypto/sealed-box';
import { openDatabase } from '../src/db';
import { createStdoutLogger } from '../src/logger';
import { startHerald } from '../src/main';
import { createHttpClient } from '../src/net/http';
import { createPlatformAdapters } from '../src/platforms/registry';
import { loadPlatformContext } from '../src/posts/accounts-port';

const role = process.argv[2];
const config = parseConfig(process.env);

async function runHerald(): Promise<void> {
  const herald = await startHerald(config, createStdoutLogger(config.logLevel));
  // The parent asks for a CPU profile of one drain (HERALD_BENCH_PROFILE).
  const session = new Session();
  session.connect();
  const inspect = (method: string) => new Promise<any>((done, fail) => session.post(method, (err, result) => (err ? fail(err) : done(result))));
  process.on('message', (message: { profile?: 'start' | 'stop'; file?: string }) => {
    if (message.profile === 'start') void inspect('Profiler.enable').then(() => inspect('Profiler.start'));
    if (message.profile === 'stop') {
      void inspect('Profiler.stop').then(({ profile }) => {
        writeFileSync(message.file!, JSON.stringify(profile));
        process.send!({ profiled: message.file });
      });
    }
  });
  process.send!({ url: herald.url });
  process.on('disconnect', () => void herald.stop().then(() => process.exit(0)));
}

const BARE_BATCH = 100;
const BARE_CONCURRENCY = 32;

async function runBare(): Promise<void> {
  const { db, pool } = openDatabase(config.databaseUrl!, { max: BARE_CONCURRENCY, applicationName: 'bench-bare' });
  const sealedBox = createSealedBox(config.encryptionKey!);
  const platformHttp = createHttpClient({ allowInsecure: true });
  const adapters = createPlatformAdapters({ http: platformHttp, platformUrls: config.platformUrls, allowInsecureUrls: true });
  const publishOne = async (row: { id: string; account_id: string; text: string }) => {
    const { ctx } = await loadPlatformContext(db, sealedBox, row.account_id);
    const published = await adapters.x.publish(ctx, { postId: row.id, text: row.text, media: [] });
    await pool.query(`update posts set status = 'published', platform_post_id = $2, platform_post_url = $3, published_at = now() where id = $1`, [
      row.id,
      published.platformPostId,
      published.url,
    ]);
  };
  const drain = async () => {
    for (;;) {
      const { rows } = await pool.query<{ id: string; account_id: string; text: string }>(
        `update posts set status = 'publishing' where id in (
           select id from posts where status = 'scheduled' and scheduled_at <= now() order by scheduled_at limit $1 for update skip locked)
         returning id, account_id, text`,
        [BARE_BATCH],
      );
      if (rows.length === 0) return;
      let next = 0;
      await Promise.all(Array.from({ length: Math.min(BARE_CONCURRENCY, rows.length) }, async () => {
        while (next < rows.length) await publishOne(rows[next++]!);
      }));
    }
  };
  process.on('message', (message: { at: number }) => {
    // Never before the scheduled instant: a timer may fire a millisecond early by the wall clock.
    const fire = () => (Date.now() < message.at ? setTimeout(fire, 1) : drain().then(() => process.send!({ done: true }), (err) => { console.error(err); process.exit(1); }));
    setTimeout(fire, Math.max(0, message.at - Date.now()));
  });
  process.send!({ ready: true });
  process.on('disconnect', () => process.exit(0));
}

(role === 'bare' ? runBare() : runHerald()).catch((err) => {
  console.error(err);
  process.exit(1);
});
