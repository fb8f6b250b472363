import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import type { AccountRow } from '../../src/db/tables/accounts';
import { removeOrphanedCopies, removeUnusedCopies } from '../../src/posts/media-cleanup';
import { png } from '../media/fixtures';
import { insertXAccount } from './fixtures';
import { startPostsHarness, type PostsHarness } from './harness';

/** README "Media": the uploads a user keeps, listed and deleted, and the copies no waiting post names swept away. */
describe('Uploads kept: GET and DELETE /api/v1/media, and the sweep of copies', function () {
  this.timeout(60_000);
  let h: PostsHarness;
  let x: AccountRow;
  let origin: http.Server;
  let originUrl: string;
  let hoursAhead = 1;

  before(async () => {
    h = await startPostsHarness({ plan: 'agent' });
    x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    // `/<width>.png` is a PNG that wide: each upload a different file.
    origin = http.createServer((req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(png(Number(req.url!.slice(1, -4)), 10)));
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    originUrl = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
  });
  after(async () => {
    origin?.closeAllConnections();
    await new Promise((resolve) => origin?.close(resolve));
    await h?.stop();
  });

  const upload = async (width: number, key?: string): Promise<{ id: string; size: number }> => {
    const res = await h.api.request('POST', '/api/v1/media', { key, body: { url: `${originUrl}/${width}.png` } });
    assert.equal(res.status, 201, res.text);
    return res.body.data;
  };
  /** Scheduled an hour apart from the last, as the spacing rule asks. */
  const schedule = async (body: Record<string, unknown>) => {
    await h.syncClock();
    const at = new Date(h.now().getTime() + hoursAhead++ * 3_600_000).toISOString();
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, schedule_at: at, ...body } });
    assert.equal(res.status, 201, res.text);
    return res.body.data.id as string;
  };
  const stored = async (id: string) => (await h.db.selectFrom('media').select('origin').where('id', '=', id).executeTakeFirst())?.origin ?? null;
  const listing = async (query = '') => {
    const res = await h.api.request('GET', `/api/v1/media${query}`);
    assert.equal(res.status, 200, res.text);
    return res.body as { data: Array<{ id: string; size: number }>; meta: { storage: { used_bytes: number; limit_bytes: number | null } } };
  };

  it('lists the uploads kept, newest first, a page at a time, with the storage of the plan they take; copies are not listed', async () => {
    const before = await listing();
    const first = await upload(11);
    const second = await upload(12);
    await schedule({ text: 'a copy is not an upload', media_urls: [`${originUrl}/13.png`] });
    const page = await listing('?limit=2');
    assert.deepEqual(page.data.map((m) => m.id), [second.id, first.id]);
    assert.deepEqual(page.meta.storage, { used_bytes: before.meta.storage.used_bytes + first.size + second.size, limit_bytes: 10_000_000_000 });
    assert.deepEqual((await listing('?limit=1&offset=1')).data.map((m) => m.id), [first.id]);
    assert.equal((await h.api.request('GET', '/api/v1/media?limit=101')).status, 400);
  });

  it("GET /media/:id answers an upload; another user's, a copy and a malformed id are 404 media_not_found", async () => {
    const mine = await upload(21);
    const res = await h.api.request('GET', `/api/v1/media/${mine.id}`);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.data.id, mine.id);

    const other = await h.api.newUser('agent');
    const postId = await schedule({ text: 'holds a copy', media_urls: [`${originUrl}/22.png`] });
    const copyId = (await h.db.selectFrom('posts').select('media').where('id', '=', postId).executeTakeFirstOrThrow()).media![0]!.media_id!;
    for (const [id, key] of [[mine.id, other.apiKey], [copyId, undefined], ['not-an-id', undefined]] as const) {
      const refused = await h.api.request('GET', `/api/v1/media/${id}`, { key });
      assert.deepEqual([refused.status, refused.body.error.code], [404, 'media_not_found'], id);
    }
    const notTheirs = await h.api.request('DELETE', `/api/v1/media/${mine.id}`, { key: other.apiKey });
    assert.deepEqual([notTheirs.status, notTheirs.body.error.code], [404, 'media_not_found']);
    assert.equal(await stored(mine.id), 'upload');
  });

  it('DELETE of an upload no post waits for removes it at once; again, or naming it in a post or a draft promotion, is 404', async () => {
    const gone = await upload(31);
    const draft = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'a draft naming it', media_ids: [gone.id], draft: true } });
    assert.equal(draft.status, 201, draft.text);
    const res = await h.api.request('DELETE', `/api/v1/media/${gone.id}`);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.data.id, gone.id);
    assert.equal(await stored(gone.id), null);
    assert.equal((await h.api.request('DELETE', `/api/v1/media/${gone.id}`)).status, 404);
    const named = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'names a deleted upload', media_ids: [gone.id] } });
    assert.deepEqual([named.status, named.body.error.code], [404, 'media_not_found']);
    const promoted = await h.api.request('PATCH', `/api/v1/posts/${draft.body.data.id}`, { body: { publish: true } });
    assert.deepEqual([promoted.status, promoted.body.error?.code], [404, 'media_not_found']);
  });

  it('DELETE of an upload a scheduled post uses: gone from the uploads and the storage, the post still publishes it, then the file goes', async () => {
    const kept = await upload(41);
    const postId = await schedule({ text: 'publishes a deleted upload', media_ids: [kept.id] });
    const used = (await listing()).meta.storage.used_bytes;
    assert.equal((await h.api.request('DELETE', `/api/v1/media/${kept.id}`)).status, 200);
    assert.equal(await stored(kept.id), 'url', 'kept for the post, as a copy');
    assert.equal((await listing()).meta.storage.used_bytes, used - kept.size);
    assert.ok(!(await listing('?limit=100')).data.some((m) => m.id === kept.id));
    assert.equal((await h.api.request('GET', `/api/v1/media/${kept.id}`)).status, 404);
    const named = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'names it again', media_ids: [kept.id] } });
    assert.deepEqual([named.status, named.body.error.code], [404, 'media_not_found']);
    // The post it was in keeps it through an edit that names its media again.
    const edited = await h.api.request('PATCH', `/api/v1/posts/${postId}`, { body: { text: 'publishes a deleted upload, edited', media_ids: [kept.id] } });
    assert.equal(edited.status, 200, edited.text);

    await h.settle(postId);
    const post = await h.api.request('GET', `/api/v1/posts/${postId}`);
    assert.equal(post.body.data.status, 'published', post.text);
    assert.equal(h.standIns.x.liveTweets().find((t) => t.text.startsWith('publishes a deleted upload'))?.media_ids?.length, 1);
    assert.equal(await stored(kept.id), null, 'removed after the last post that used it');
  });

  it('a post whose upload was deleted between its check and its row (a race) fails at its time, saying why; nothing is sent', async () => {
    const raced = await upload(61);
    const postId = await schedule({ text: 'lost its file', media_ids: [raced.id] });
    await h.db.deleteFrom('media').where('id', '=', raced.id).execute();
    await h.settle(postId);
    const post = (await h.api.request('GET', `/api/v1/posts/${postId}`)).body.data;
    assert.deepEqual([post.status, post.error_message], ['failed', 'A media file of this post was deleted before it was published; nothing was sent.']);
    assert.equal(h.standIns.x.liveTweets().find((t) => t.text.startsWith('lost its file')), undefined);
  });

  it('the hourly sweep removes copies over an hour old that no scheduled or publishing post names, and nothing else', async () => {
    const waitingPost = await schedule({ text: 'its copy is needed', media_urls: [`${originUrl}/51.png`] });
    const needed = (await h.db.selectFrom('posts').select('media').where('id', '=', waitingPost).executeTakeFirstOrThrow()).media![0]!.media_id!;
    const store = h.reconcilerRuntime().mediaStore;
    const file = png(52, 10);
    const facts = { kind: 'image', format: 'png', mimeType: 'image/png', size: file.length, width: 52, height: 10, durationMs: null } as const;
    const orphan = (await store.store({ userId: h.api.userId, bytes: file, facts, origin: 'url' })).id;
    const recent = (await store.store({ userId: h.api.userId, bytes: file, facts, origin: 'url' })).id;
    const upload = (await store.store({ userId: h.api.userId, bytes: file, facts, origin: 'upload' })).id;
    await sql`update media set created_at = now() - interval '2 hours' where id in (${needed}, ${orphan}, ${upload})`.execute(h.db);

    assert.ok((await removeOrphanedCopies(h.db)) >= 1);
    assert.deepEqual(
      { needed: await stored(needed), orphan: await stored(orphan), recent: await stored(recent), upload: await stored(upload) },
      { needed: 'url', orphan: null, recent: 'url', upload: 'upload' },
    );
  });

  it('after a post, its copies go unless another scheduled post or a draft names them (the post itself does not count)', async () => {
    const scheduled = await schedule({ text: 'keeps its copy' });
    const draft = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, draft: true, text: 'a draft keeps its copy' } });
    assert.equal(draft.status, 201, draft.text);
    const done = await schedule({ text: 'the post whose copies are removed' });
    const store = h.reconcilerRuntime().mediaStore;
    const file = png(53, 10);
    const facts = { kind: 'image', format: 'png', mimeType: 'image/png', size: file.length, width: 53, height: 10, durationMs: null } as const;
    const [ofScheduled, ofDraft, onlyItsOwn] = await Promise.all(
      [0, 1, 2].map(async () => (await store.store({ userId: h.api.userId, bytes: file, facts, origin: 'url' })).id),
    );
    const names = (postId: string, ids: string[]) =>
      sql`update posts set media = ${JSON.stringify(ids.map((id) => ({ media_id: id })))}::jsonb where id = ${postId}`.execute(h.db);
    await names(scheduled, [ofScheduled!]);
    await names(draft.body.data.id, [ofDraft!]);
    await names(done, [ofScheduled!, ofDraft!, onlyItsOwn!]);

    assert.equal(await removeUnusedCopies(h.reconcilerRuntime(), [ofScheduled!, ofDraft!, onlyItsOwn!], done), 1);
    assert.deepEqual([await stored(ofScheduled!), await stored(ofDraft!), await stored(onlyItsOwn!)], ['url', 'url', null]);
  });
});
