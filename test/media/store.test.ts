import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { createMediaStore, type MediaStore, toMediaApiShape } from '../../src/media/store';
import { requireDecodable } from '../../src/media/sniff';
import { rejectsWith } from './assert-error';
import { jpeg, png } from './fixtures';
import * as m0030 from '../../migrations/0030_media';
import { insertUser, mediaTestDatabase } from './media-db';

describe('media store (real PostgreSQL)', function () {
  this.timeout(60_000);
  let database: Awaited<ReturnType<typeof mediaTestDatabase>>;
  let store: MediaStore;
  let alice: string;
  let bob: string;

  before(async () => {
    database = await mediaTestDatabase();
    // Small chunks so an ordinary test image spans several chunks and more than one insert batch.
    store = createMediaStore(database.media, { chunkBytes: 100 });
    alice = await insertUser(database.db);
    bob = await insertUser(database.db);
  });

  const counts = async (userId: string) => {
    const { rows } = await sql<{ media: number; chunks: number }>`
      select (select count(*)::int from media where user_id = ${userId}) as media,
             (select count(*)::int from media_chunks c join media m on m.id = c.media_id where m.user_id = ${userId}) as chunks`.execute(database.db);
    return rows[0];
  };

  it('stores the bytes in chunks and answers the API shape of decisions.md "Media"', async () => {
    const bytes = jpeg(640, 480);
    const record = await store.store({ userId: alice, bytes, facts: requireDecodable(bytes), origin: 'upload' });
    assert.deepEqual(toMediaApiShape(record), {
      id: record.id,
      mime_type: 'image/jpeg',
      size: bytes.length,
      width: 640,
      height: 480,
      duration_ms: null,
      created_at: record.createdAt.toISOString(),
    });
    assert.match(record.id, /^[0-9a-f-]{36}$/);
    assert.ok(Math.abs(record.createdAt.getTime() - Date.now()) < 60_000);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from media_chunks where media_id = ${record.id}`.execute(database.db);
    assert.equal(rows[0].n, Math.ceil(bytes.length / 100));
    assert.ok(rows[0].n > 8, 'spans more than one insert batch');

    const loaded = await store.loadForUser(alice, record.id);
    assert.ok(loaded.bytes.equals(bytes));
    assert.equal(loaded.sha256.length, 64);
    const streamed: Buffer[] = [];
    for await (const chunk of store.readChunks(record.id)) streamed.push(chunk);
    assert.ok(Buffer.concat(streamed).equals(bytes));
  });

  it('keeps where a downloaded copy came from', async () => {
    const bytes = png(2, 2);
    const record = await store.store({ userId: alice, bytes, facts: requireDecodable(bytes), origin: 'url', sourceUrl: 'https://cdn.example.com/a.png' });
    assert.deepEqual([record.origin, record.sourceUrl], ['url', 'https://cdn.example.com/a.png']);
    assert.deepEqual(await store.findById(record.id), record);
  });

  it("answers 404 media_not_found for another user's media, an unknown id and a malformed id", async () => {
    const bytes = png(3, 3);
    const record = await store.store({ userId: alice, bytes, facts: requireDecodable(bytes), origin: 'upload' });
    await rejectsWith(store.loadForUser(bob, record.id), 404, 'media_not_found', `Media ${record.id} was not found`);
    await rejectsWith(store.describeForUser(bob, record.id), 404, 'media_not_found', `Media ${record.id} was not found`);
    await rejectsWith(store.loadForUser(alice, '00000000-0000-4000-8000-000000000000'), 404, 'media_not_found', 'Media 00000000-0000-4000-8000-000000000000 was not found');
    await rejectsWith(store.loadForUser(alice, 'not-a-uuid'), 404, 'media_not_found', 'Media not-a-uuid was not found');
    assert.equal(await store.findById('not-a-uuid'), null);
  });

  it('deletes the row and its chunks, only for the owner when one is named', async () => {
    const bytes = jpeg(64, 64);
    const record = await store.store({ userId: bob, bytes, facts: requireDecodable(bytes), origin: 'url' });
    assert.equal(await store.delete(record.id, alice), false);
    assert.equal((await counts(bob)).media, 1);
    assert.equal(await store.delete(record.id, bob), true);
    assert.deepEqual(await counts(bob), { media: 0, chunks: 0 });
    assert.equal(await store.delete(record.id), false);
    assert.equal(await store.delete('nope'), false);
  });

  it('after publishing, removes downloaded copies but never uploads', async () => {
    const dave = await insertUser(database.db);
    const stored = await Promise.all(
      (['url', 'upload', 'url'] as const).map((origin, i) => store.store({ userId: dave, bytes: png(i + 1, 1), facts: requireDecodable(png(i + 1, 1)), origin })),
    );
    assert.equal(await store.deleteDownloadedCopies([...stored.map((m) => m.id), 'not-an-id']), 2);
    assert.deepEqual(await counts(dave), { media: 1, chunks: 1 });
    assert.equal((await store.describeForUser(dave, stored[1].id)).origin, 'upload');
    assert.equal(await store.deleteDownloadedCopies([]), 0);
  });

  it('answers 503 media_storage_failed and leaves nothing behind when an insert fails part-way', async () => {
    const carol = await insertUser(database.db);
    // Fail the insert of the tenth chunk: the media row and nine chunks were already written in the transaction.
    await sql`create function media_test_fail() returns trigger language plpgsql as $$
      begin if new.seq = 9 then raise exception 'disk full (test)'; end if; return new; end $$`.execute(database.db);
    await sql`create trigger media_test_fail before insert on media_chunks for each row execute function media_test_fail()`.execute(database.db);
    try {
      const bytes = jpeg(640, 480);
      await rejectsWith(
        store.store({ userId: carol, bytes, facts: requireDecodable(bytes), origin: 'url' }),
        503,
        'media_storage_failed',
        'The media was downloaded but could not be stored; nothing was published or charged. Try again.',
      );
      assert.deepEqual(await counts(carol), { media: 0, chunks: 0 });
    } finally {
      await sql`drop trigger media_test_fail on media_chunks`.execute(database.db);
      await sql`drop function media_test_fail()`.execute(database.db);
    }
  });

  it('migration 0030 goes down and up again on its own database', async () => {
    const fresh = await mediaTestDatabase();
    const exists = async () => (await sql<{ t: string | null }>`select to_regclass('media_chunks')::text as t`.execute(fresh.db)).rows[0].t;
    assert.equal(await exists(), 'media_chunks');
    await m0030.down(fresh.db);
    assert.equal(await exists(), null);
    await m0030.up(fresh.db);
    assert.equal(await exists(), 'media_chunks');
  });
});
