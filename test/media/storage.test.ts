import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { type Kysely, sql } from 'kysely';
import type { MediaTables } from '../../src/db/tables/media';
import { errorMiddleware } from '../../api/middleware/errors';
import type { ApiError } from '../../src/errors';
import { createMediaRouter } from '../../src/media/routes';
import { requireRoomFor } from '../../src/media/storage';
import { createMediaStore, type MediaStore } from '../../src/media/store';
import { createHttpClient, type HttpClient } from '../../src/net/http';
import type { PlanName } from '../../src/plans';
import { png } from './fixtures';
import { insertUser, mediaTestDatabase } from './media-db';

/** The plan's media storage (README "Media"): what the uploads a user keeps may take. The Free plan keeps 2 GB. */
describe('media storage of the plan', function () {
  this.timeout(60_000);
  let database: Awaited<ReturnType<typeof mediaTestDatabase>>;
  let store: MediaStore;
  let client: HttpClient;
  let api: http.Server;
  let apiUrl: string;

  before(async () => {
    database = await mediaTestDatabase();
    store = createMediaStore(database.media);
    client = createHttpClient({ allowInsecure: true });
    const app = express();
    const callerOf = (req: express.Request) => ({ userId: String(req.headers['x-user']), plan: String(req.headers['x-plan']) as PlanName });
    app.use('/api/v1/media', createMediaRouter({ store, http: client, allowInsecureUrls: true, callerOf }));
    app.use(errorMiddleware);
    api = http.createServer(app);
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
  });

  after(async () => {
    await client.close();
    api.closeAllConnections();
    await new Promise((resolve) => api.close(resolve));
    await database.close();
  });

  /** A user whose kept uploads (or downloaded copies) already take `bytes`: rows of sizes alone stand for them (the sum reads sizes). */
  async function userHolding(bytes: number, origin: 'upload' | 'url' = 'upload'): Promise<string> {
    const userId = await insertUser(database.db);
    for (let left = bytes; left > 0; left -= 1_000_000_000) {
      await sql`insert into media (user_id, kind, format, mime_type, size, sha256, origin, chunk_count)
                values (${userId}, 'video', 'mp4', 'video/mp4', ${Math.min(left, 1_000_000_000)}, 'x', ${origin}, 1)`.execute(database.db);
    }
    return userId;
  }

  const upload = (userId: string, bytes: Buffer, plan: PlanName = 'free') => {
    const form = new FormData();
    form.append('file', new Blob([bytes]), 'upload.png');
    return fetch(`${apiUrl}/api/v1/media`, { method: 'POST', body: form, headers: { 'x-user': userId, 'x-plan': plan } });
  };
  /** The files uploaded by the test (not the rows standing for earlier uploads). */
  const uploadCount = async (userId: string) =>
    (await sql<{ n: number }>`select count(*)::int as n from media where user_id = ${userId} and origin = 'upload' and sha256 <> 'x'`.execute(database.db)).rows[0]!.n;

  it('a file that fits is stored; one that would go over is 429 usage_limit_exceeded, nothing stored', async () => {
    const file = png(64, 64);
    const userId = await userHolding(2_000_000_000 - file.length - 50);
    const fits = await upload(userId, file);
    assert.equal(fits.status, 201, await fits.clone().text());
    const over = await upload(userId, png(2, 2));
    assert.deepEqual(
      { status: over.status, retryAfter: over.headers.get('retry-after'), body: await over.json() },
      {
        status: 429,
        retryAfter: null,
        body: {
          error: {
            code: 'usage_limit_exceeded',
            message: `Media storage full: your uploads take 2 GB of the Free plan's 2 GB, and this file (${png(2, 2).length} bytes) does not fit in the 50 bytes left. Delete uploads you no longer need (GET /api/v1/media lists them; DELETE /api/v1/media/:id removes one). Nothing was stored.`,
          },
        },
      },
    );
    assert.equal(await uploadCount(userId), 1);
  });

  it('with the storage already full the upload is refused before its bytes are read, and the connection closed', async () => {
    const userId = await userHolding(2_000_000_000);
    const res = await upload(userId, Buffer.alloc(5_000_000, 1));
    assert.equal(res.status, 429);
    assert.equal(((await res.json()) as { error: { message: string } }).error.message.split('. ')[0], "Media storage full: your uploads take 2 GB of the Free plan's 2 GB, and no room is left for another file");
    assert.equal(res.headers.get('connection'), 'close');
  });

  it('an upload checked while another of the user is being stored waits for it to commit, then counts it', async () => {
    const userId = await userHolding(2_000_000_000 - 150);
    const writeUpload = (trx: Kysely<MediaTables>, size: number) =>
      trx.insertInto('media').values({ user_id: userId, kind: 'image', format: 'png', mime_type: 'image/png', size, sha256: 'y', origin: 'upload', chunk_count: 1 }).execute();
    let commitFirst!: () => void;
    let firstChecked!: () => void;
    const checked = new Promise<void>((resolve) => (firstChecked = resolve));
    const first = database.media.transaction().execute(async (trx) => {
      await writeUpload(trx, 100);
      await requireRoomFor(trx, userId, 'free', 100);
      firstChecked();
      await new Promise<void>((resolve) => (commitFirst = resolve));
    });
    await checked;
    let secondSettled = false;
    const second = database.media
      .transaction()
      .execute(async (trx) => {
        await writeUpload(trx, 100);
        await requireRoomFor(trx, userId, 'free', 100);
      })
      .finally(() => (secondSettled = true));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const waited = !secondSettled;
    commitFirst();
    await first;
    assert.ok(waited, 'the second check waits for the first upload to commit');
    await assert.rejects(second, (err: ApiError) => err.code === 'usage_limit_exceeded');
  });

  it("downloaded copies of media URLs do not count, and a larger plan's storage holds more", async () => {
    const copies = await userHolding(2_000_000_000, 'url');
    assert.equal((await upload(copies, png(8, 8))).status, 201);
    const pro = await userHolding(99_000_000_000);
    assert.equal((await upload(pro, png(8, 8), 'pro')).status, 201);
    assert.equal((await upload(pro, png(8, 8), 'free')).status, 429);
    assert.equal((await upload(await userHolding(900_000_000_000), png(8, 8), 'enterprise')).status, 201);
  });

  it('the same bound holds for an upload from a URL', async () => {
    const file = png(32, 32);
    const origin = http.createServer((_req, res) => res.writeHead(200).end(file));
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    try {
      const userId = await userHolding(2_000_000_000 - file.length + 1);
      const res = await fetch(`${apiUrl}/api/v1/media`, {
        method: 'POST',
        body: JSON.stringify({ url: `http://127.0.0.1:${(origin.address() as AddressInfo).port}/cat.png` }),
        headers: { 'x-user': userId, 'x-plan': 'free', 'content-type': 'application/json' },
      });
      assert.equal(res.status, 429);
      assert.equal(await uploadCount(userId), 0);
    } finally {
      origin.closeAllConnections();
      await new Promise((resolve) => origin.close(resolve));
    }
  });
});
