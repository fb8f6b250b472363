import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AccountRow } from '../../src/db/tables/accounts';
import { gif, jpeg, movie, png } from '../media/fixtures';
import { insertAccount, insertTelegramAccount, insertXAccount } from './fixtures';
import { startPostsHarness, type PostsHarness } from './harness';

/**
 * A tiny origin serving fixed files, as a client's media host. `/slow/<n>.jpg` answers a JPEG after 150 ms, counting
 * how many such answers are in flight at once (`peakSlow`).
 */
async function startFileServer(files: Record<string, { type: string; body: Buffer }>) {
  const slow = { inFlight: 0, peak: 0 };
  const hits = new Map<string, number>();
  const server = http.createServer((req, res) => {
    hits.set(req.url ?? '', (hits.get(req.url ?? '') ?? 0) + 1);
    if (req.url?.startsWith('/slow/')) {
      slow.peak = Math.max(slow.peak, ++slow.inFlight);
      const body = jpeg(1080, 1080 + Number(req.url.slice(6, -4)));
      return void setTimeout(() => {
        slow.inFlight -= 1;
        res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': String(body.length) }).end(body);
      }, 150);
    }
    const file = files[req.url ?? ''];
    if (!file) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': file.type, 'content-length': String(file.body.length) }).end(file.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    peakSlow: () => slow.peak,
    hitsOf: (path: string) => hits.get(path) ?? 0,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe('Posts with media: URLs, upload ids, entries with alt', function () {
  this.timeout(60_000);
  let h: PostsHarness;
  let x: AccountRow;
  let files: Awaited<ReturnType<typeof startFileServer>>;

  before(async () => {
    h = await startPostsHarness({ plan: 'agent' });
    x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    files = await startFileServer({
      '/cat.png': { type: 'image/png', body: png(40, 30) },
      '/cat.jpg': { type: 'image/jpeg', body: jpeg(1080, 1080) },
      '/notes.txt': { type: 'image/png', body: Buffer.from('this is not an image at all') },
      // No extension: only the bytes tell it is a GIF.
      '/dancing': { type: 'application/octet-stream', body: gif(20, 20) },
      '/long.mp4': { type: 'video/mp4', body: movie({ duration: 141_000 }) },
      '/blink.mp4': { type: 'video/mp4', body: movie({ duration: 2_000 }) },
      '/film.mov': { type: 'video/quicktime', body: movie({ duration: 16 * 60_000 }) },
      '/big.png': { type: 'image/png', body: Buffer.alloc(1_200_000, 1) },
      '/tall.png': { type: 'image/png', body: png(800, 12_000) },
      // A phone's portrait photo, 3:4: narrower than Instagram's 4:5.
      '/portrait.jpg': { type: 'image/jpeg', body: jpeg(1080, 1440) },
    });
  });
  after(async () => {
    await files?.close();
    await h?.stop();
  });

  const mediaRows = () => h.db.selectFrom('media').select(['id', 'origin']).where('user_id', '=', h.api.userId).execute();

  it('media_urls: downloaded, checked, uploaded to the platform, and the downloaded copy removed after publishing', async () => {
    const url = `${files.origin}/cat.png`;
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'a cat', media_urls: [url] } });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(res.body.data.media_urls, [url]);
    const tweet = h.standIns.x.liveTweets().find((t) => t.text.startsWith('a cat '));
    assert.equal(tweet?.media_ids?.length, 1);
    // The answer comes once the platform answered; the cleanup is the workflow's last step.
    await h.settle(res.body.data.id);
    assert.deepEqual(await mediaRows(), []);
  });

  it('a media refusal is made once: the URL is not downloaded again from a fresh read of unchanged accounts', async () => {
    // A create first, so the next one starts from this process's kept read of the account.
    const warm = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'warms the kept read' } });
    assert.equal(warm.status, 201, warm.text);
    const before = files.hitsOf('/notes.txt');
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'refused once', media_urls: [`${files.origin}/notes.txt`] } });
    assert.equal(res.status, 400, res.text);
    assert.equal(files.hitsOf('/notes.txt') - before, 1, 'downloaded once');
  });

  it('an unusable file is refused with 400 unsupported_media before anything is written', async () => {
    const res = await h.api.request('POST', '/api/v1/posts', {
      body: { account_id: x.id, text: 'not a cat', media_urls: [`${files.origin}/notes.txt`], schedule_at: new Date(h.now().getTime() + 3_600_000).toISOString() },
    });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.error.code, 'unsupported_media');
    assert.equal((await h.db.selectFrom('posts').select('id').where('text', '=', 'not a cat').execute()).length, 0);
    assert.deepEqual(await mediaRows(), []);
  });

  it('scheduled: the file is stored at creation and published from the store at the time', async () => {
    await h.syncClock();
    const url = `${files.origin}/cat.png`;
    const res = await h.api.request('POST', '/api/v1/posts', {
      body: { account_id: x.id, text: 'a scheduled cat', media: [{ url, alt: 'A grey cat' }], schedule_at: new Date(h.now().getTime() + 3_600_000).toISOString() },
    });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual((await mediaRows()).map((r) => r.origin), ['url']);
    await h.settle(res.body.data.id);
    const tweet = h.standIns.x.liveTweets().find((t) => t.text.startsWith('a scheduled cat '));
    assert.equal(tweet?.media_ids?.length, 1);
    assert.equal(h.standIns.x.media(tweet!.media_ids![0]!)?.alt, 'A grey cat');
    assert.deepEqual(await mediaRows(), []);
  });

  it('media_ids from POST /api/v1/media publish and the upload is kept; another user\'s id is 404 media_not_found', async () => {
    const upload = await h.api.request('POST', '/api/v1/media', { body: { url: `${files.origin}/cat.png` } });
    assert.equal(upload.status, 201, upload.text);
    const id = upload.body.data.id;
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'uploaded cat', media_ids: [id] } });
    assert.equal(res.status, 201, res.text);
    assert.equal(h.standIns.x.liveTweets().find((t) => t.text.startsWith('uploaded cat '))?.media_ids?.length, 1);
    assert.deepEqual(await mediaRows(), [{ id, origin: 'upload' }]);

    const other = await h.api.newUser('agent');
    const theirs = await insertXAccount(h.db, other.userId, h.standIns.x);
    const foreign = await h.api.request('POST', '/api/v1/posts', { key: other.apiKey, body: { account_id: theirs.id, text: 'stolen cat', media_ids: [id] } });
    assert.equal(foreign.status, 404);
    assert.equal(foreign.body.error.code, 'media_not_found');
  });

  it('a new placement re-checks the stored media: a scheduled feed post with a JPEG cannot become a reel; a draft is warned', async () => {
    await h.syncClock();
    const ig = await insertAccount(h.db, h.api.userId, { platform: 'instagram', platform_account_id: 'ig-reel', username: 'igreel', via: 'instagram', credentials: { access_token: 't' } });
    const url = `${files.origin}/cat.jpg`;
    const at = new Date(h.now().getTime() + 3_600_000).toISOString();
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: ig.id, text: 'a feed cat', media_urls: [url], schedule_at: at } });
    assert.equal(res.status, 201, res.text);
    const id = res.body.data.id;
    const reel = await h.api.request('PATCH', `/api/v1/posts/${id}`, { body: { text: '', configuration: { instagram: { placement: 'reel' } } } });
    assert.deepEqual([reel.status, reel.body], [400, { error: { code: 'unsupported_media', message: 'media_urls[0] is an image; an instagram reel takes MP4 and MOV video' } }]);
    const stored = await h.db.selectFrom('posts').select(['configuration', 'media']).where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(stored.configuration, null);
    // A placement the file fits is taken, and the post keeps its stored file and the URL it came from.
    const story = await h.api.request('PATCH', `/api/v1/posts/${id}`, { body: { text: '', configuration: { instagram: { placement: 'story' } } } });
    assert.equal(story.status, 200, story.text);
    assert.deepEqual(story.body.data.media_urls, [url]);
    assert.deepEqual((await h.db.selectFrom('posts').select('media').where('id', '=', id).executeTakeFirstOrThrow()).media, stored.media);
    await h.api.request('DELETE', `/api/v1/posts/${id}`);

    const upload = await h.api.request('POST', '/api/v1/media', { body: { url } });
    const draft = await h.api.request('POST', '/api/v1/posts', { body: { account_id: ig.id, text: 'a draft cat', media_ids: [upload.body.data.id], draft: true } });
    assert.deepEqual(draft.body.data.warnings, []);
    const reelDraft = await h.api.request('PATCH', `/api/v1/posts/${draft.body.data.id}`, { body: { text: '', configuration: { instagram: { placement: 'reel' } } } });
    assert.equal(reelDraft.status, 200, reelDraft.text);
    assert.deepEqual(reelDraft.body.data.warnings, [
      { account_id: ig.id, platform: 'instagram', code: 'unsupported_media', message: 'media_ids[0] is an image; an instagram reel takes MP4 and MOV video' },
    ]);
  });

  // X takes 4 photos or 1 GIF or 1 video, alt text up to 1,000 characters and video of 0.5 to 140 s: media it would
  // refuse at publish is refused when the post is scheduled (Media rule 5), nothing written and nothing kept.
  const scheduledFor = () => new Date(h.now().getTime() + 3_600_000).toISOString();
  const refusedOnX = async (text: string, media: Record<string, unknown>) => {
    await h.syncClock();
    const kept = await mediaRows();
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text, ...media, schedule_at: scheduledFor() } });
    assert.equal((await h.db.selectFrom('posts').select('id').where('text', '=', text).execute()).length, 0);
    assert.deepEqual(await mediaRows(), kept);
    return [res.status, res.body];
  };

  it('x: a GIF with a photo is 400 unsupported_media, read from the bytes', async () => {
    assert.deepEqual(await refusedOnX('a gif and a cat', { media_urls: [`${files.origin}/cat.png`, `${files.origin}/dancing`] }), [
      400,
      { error: { code: 'unsupported_media', message: 'x posts a GIF on its own; media_urls has 2 items including a GIF' } },
    ]);
  });

  it('x: alt text over 1,000 characters is 400 bad_request naming the limit', async () => {
    assert.deepEqual(await refusedOnX('a described cat', { media: [{ url: `${files.origin}/cat.png`, alt: 'a'.repeat(1_001) }] }), [
      400,
      { error: { code: 'bad_request', message: 'media[0].alt is 1,001 characters; x takes alt text up to 1,000 characters' } },
    ]);
  });

  it('x: a video longer than 140 s is 400 unsupported_media', async () => {
    assert.deepEqual(await refusedOnX('a long video', { media_urls: [`${files.origin}/long.mp4`] }), [
      400,
      { error: { code: 'unsupported_media', message: 'media_urls[0] is a video of 141 s; x accepts videos of 0.5 to 140 s' } },
    ]);
  });

  it('instagram: a reel of a video under 3 s or over 15 min is 400 unsupported_media when scheduled, nothing kept', async () => {
    await h.syncClock();
    const ig = await insertAccount(h.db, h.api.userId, { platform: 'instagram', platform_account_id: 'ig-reel-length', username: 'igreellength', via: 'instagram', credentials: { access_token: 't' } });
    const kept = await mediaRows();
    for (const [file, seconds] of [['blink.mp4', '2'], ['film.mov', '960']]) {
      const res = await h.api.request('POST', '/api/v1/posts', {
        body: { account_id: ig.id, text: '', media_urls: [`${files.origin}/${file}`], configuration: { instagram: { placement: 'reel' } }, schedule_at: scheduledFor() },
      });
      assert.deepEqual([res.status, res.body], [
        400,
        { error: { code: 'unsupported_media', message: `media_urls[0] is a video of ${seconds} s; an instagram reel accepts videos of 3 to 900 s` } },
      ]);
    }
    assert.deepEqual(await mediaRows(), kept);
  });

  it('instagram: a 3:4 photo is 400 unsupported_media when scheduled as a feed post, nothing kept; as a story it is taken', async () => {
    await h.syncClock();
    const ig = await insertAccount(h.db, h.api.userId, { platform: 'instagram', platform_account_id: 'ig-aspect', username: 'igaspect', via: 'instagram', credentials: { access_token: 't' } });
    const kept = await mediaRows();
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: ig.id, text: 'portrait', media_urls: [`${files.origin}/portrait.jpg`], schedule_at: scheduledFor() } });
    assert.deepEqual([res.status, res.body], [
      400,
      { error: { code: 'unsupported_media', message: 'media_urls[0] is an image of 1,080 × 1,440 pixels; instagram accepts photos from 4:5 (portrait) to 1.91:1 (landscape) in width to height' } },
    ]);
    assert.deepEqual(await mediaRows(), kept);
    const story = await h.api.request('POST', '/api/v1/posts', {
      body: { account_id: ig.id, text: '', media_urls: [`${files.origin}/portrait.jpg`], configuration: { instagram: { placement: 'story' } }, schedule_at: scheduledFor() },
    });
    assert.equal(story.status, 201, story.text);
  });

  it('telegram: a photo of 800 × 12,000 pixels is 400 unsupported_media when scheduled; a draft with it is warned', async () => {
    await h.syncClock();
    const { account: tg } = await insertTelegramAccount(h.db, h.api.userId, h.standIns.telegram);
    const message = 'media_urls[0] is an image of 800 × 12,000 pixels; telegram accepts photos whose width and height add up to at most 10,000 pixels';
    const kept = await mediaRows();
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: tg.id, text: 'a tall one', media_urls: [`${files.origin}/tall.png`], schedule_at: scheduledFor() } });
    assert.deepEqual([res.status, res.body], [400, { error: { code: 'unsupported_media', message } }]);
    assert.deepEqual(await mediaRows(), kept);

    const upload = await h.api.request('POST', '/api/v1/media', { body: { url: `${files.origin}/tall.png` } });
    assert.equal(upload.status, 201, upload.text);
    const draft = await h.api.request('POST', '/api/v1/posts', { body: { account_id: tg.id, text: 'a tall draft', media_ids: [upload.body.data.id], draft: true } });
    assert.equal(draft.status, 201, draft.text);
    assert.deepEqual(draft.body.data.warnings, [{ account_id: tg.id, platform: 'telegram', code: 'unsupported_media', message: message.replace('media_urls', 'media_ids') }]);
  });

  it('the copies downloaded for a scheduled post go when it is deleted or its account switched off', async () => {
    await h.syncClock();
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const at = (hours: number) => new Date(h.now().getTime() + hours * 3_600_000).toISOString();
    const create = async (text: string, hours: number) => {
      const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: account.id, text, media_urls: [`${files.origin}/cat.png`], schedule_at: at(hours) } });
      assert.equal(res.status, 201, res.text);
      const row = await h.db.selectFrom('posts').select('media').where('id', '=', res.body.data.id).executeTakeFirstOrThrow();
      return { id: res.body.data.id as string, mediaId: row.media![0]!.media_id! };
    };
    const stored = async (mediaId: string) => (await mediaRows()).some((m) => m.id === mediaId);
    const deleted = await create('deleted before its time', 5);
    const switchedOff = await create('its account switched off', 10);
    assert.equal(await stored(deleted.mediaId), true);

    assert.equal((await h.api.request('DELETE', `/api/v1/posts/${deleted.id}`)).status, 200);
    assert.equal(await stored(deleted.mediaId), false, 'gone with the post it was downloaded for');
    assert.equal(await stored(switchedOff.mediaId), true, 'another post\'s copy stays');

    assert.equal((await h.api.request('PATCH', `/api/v1/accounts/${account.id}`, { body: { active: false } })).status, 200);
    assert.equal(await stored(switchedOff.mediaId), false, 'gone with the account\'s cancelled posts');
  });

  it('a URL bigger than every account of the request takes is refused while it downloads, naming whose limit', async () => {
    const bluesky = await insertAccount(h.db, h.api.userId, { platform: 'bluesky', platform_account_id: 'did:plc:big', username: 'big.bsky.social', credentials: { access_token: 't' } });
    const stored = (await mediaRows()).length;
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: bluesky.id, text: 'too big for bluesky', media_urls: [`${files.origin}/big.png`] } });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.error.code, 'unsupported_media');
    assert.match(res.body.error.message, /^media_urls\[0\]: Media is too large: it exceeds .+, the largest file Bluesky accepts/);
    assert.equal((await mediaRows()).length, stored, 'nothing stored');
  });

  it('a request downloads at most 4 of its URLs at once', async () => {
    await h.syncClock();
    const ig = await insertAccount(h.db, h.api.userId, { platform: 'instagram', platform_account_id: 'ig-ten', username: 'igten', via: 'instagram', credentials: { access_token: 't' } });
    const urls = Array.from({ length: 10 }, (_, i) => `${files.origin}/slow/${i}.jpg`);
    const at = new Date(h.now().getTime() + 3_600_000).toISOString();
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: ig.id, text: 'ten at most four at a time', media_urls: urls, schedule_at: at } });
    assert.equal(res.status, 201, res.text);
    assert.equal(files.peakSlow(), 4, 'four at once, never more');
    await h.api.request('DELETE', `/api/v1/posts/${res.body.data.id}`);
  });

  it('two media spellings are 400 bad_request', async () => {
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'x', media_urls: [`${files.origin}/cat.png`], media_ids: [x.id] } });
    assert.deepEqual(res.body, { error: { code: 'bad_request', message: 'use at most one of media, media_ids and media_urls; got media_ids and media_urls' } });
  });
});
