import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createActivities } from '../../activities';
import * as attemptMarks from '../../src/posts/attempt-marks';
import * as attemptOutcomes from '../../src/posts/attempt-outcomes';
import { jpeg } from '../media/fixtures';
import { insertAccount } from './fixtures';
import { harnessActivities, startPostsHarness, type PostsHarness } from './harness';

/**
 * The container an Instagram or Threads attempt publishes is kept with the attempt (`posts.publish_attempt_handle`,
 * migration 0250) before the publish call, so a lost answer, or a retry after the worker stopped, is settled from it
 * (`src/platforms/graph/containers.ts`). The core only stores and hands back what the adapter recorded.
 */
describe('Posts: Instagram and Threads attempts settled from their container', function () {
  this.timeout(60_000);
  let h: PostsHarness;
  let activities: ReturnType<typeof createActivities>;
  let server: http.Server;
  let origin: string;
  let accountId: string | undefined;

  before(async () => {
    h = await startPostsHarness({ plan: 'agent' });
    activities = harnessActivities(h);
    const body = jpeg(1080, 1920);
    server = http.createServer((_req, res) => void res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': String(body.length) }).end(body));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    await h?.stop();
  });

  /** An Instagram story of the test user, made through the API (its image stored) and then `publishing`, as a claim leaves it. */
  async function publishingStory(): Promise<string> {
    const ig = h.standIns.instagram;
    await h.syncClock();
    accountId ??= (await insertAccount(h.db, h.api.userId, {
      platform: 'instagram', platform_account_id: ig.user.igUserId, username: ig.user.username, via: 'instagram',
      credentials: { access_token: ig.user.igToken }, settings: { igUserId: ig.user.igUserId, via: 'instagram' },
    })).id;
    const at = new Date(h.now().getTime() + 3_600_000).toISOString();
    const res = await h.api.request('POST', '/api/v1/posts', {
      body: { account_id: accountId, text: '', media_urls: [`${origin}/story.jpg`], schedule_at: at, configuration: { instagram: { placement: 'story' } } },
    });
    assert.equal(res.status, 201, res.text);
    const id: string = res.body.data.id;
    await h.db.updateTable('posts').set({ status: 'publishing' }).where('id', '=', id).execute();
    return id;
  }

  const stories = () => [...h.standIns.instagram.media.values()].filter((m) => m.kind === 'story');
  const publishPath = () => `/v25.0/${h.standIns.instagram.user.igUserId}/media_publish`;

  beforeEach(() => {
    h.standIns.instagram.media.clear();
    h.standIns.instagram.containers.clear();
  });

  it('a story whose publish answer was lost ends published with its id: exactly one story', async () => {
    const id = await publishingStory();
    h.standIns.instagram.standIn.inject({ method: 'POST', path: publishPath() }, { kind: 'reset', thenHandle: true });
    const attempt = await activities.publishToPlatform({ postId: id, now: Date.now() });
    assert.equal(stories().length, 1);
    assert.deepEqual(attempt.ok && [attempt.platformPostId, attempt.recorded], [stories()[0].id, true]);
    const row = await h.db.selectFrom('posts').select(['status', 'platform_post_id', 'publish_attempt_handle']).where('id', '=', id).executeTakeFirstOrThrow();
    assert.deepEqual([row.status, row.platform_post_id], ['published', stories()[0].id]);
    assert.ok(row.publish_attempt_handle?.includes(stories()[0].containerId), 'the container was recorded with the attempt');
  });

  it('a story that went out before the worker stopped is found from the recorded container on the retry, not sent again', async () => {
    const id = await publishingStory();
    const first = await activities.publishToPlatform({ postId: id, now: Date.now() });
    assert.equal(first.ok, true);
    // Back to the state of a worker that stopped between Instagram's answer and the write (its mark still open).
    await h.db.updateTable('posts').set({ status: 'publishing', platform_post_id: null, platform_post_url: null, published_at: null }).where('id', '=', id).execute();
    const publishes = h.standIns.instagram.standIn.calls('POST', publishPath()).length;
    const again = await activities.publishToPlatform({ postId: id, now: Date.now() });
    assert.deepEqual(again.ok && again.platformPostId, stories()[0].id);
    assert.equal(stories().length, 1);
    assert.equal(h.standIns.instagram.standIn.calls('POST', publishPath()).length, publishes, 'no publish call on the retry');
    const row = await h.db.selectFrom('posts').select(['status', 'platform_post_id']).where('id', '=', id).executeTakeFirstOrThrow();
    assert.deepEqual([row.status, row.platform_post_id], ['published', stories()[0].id]);
  });

  it('the handle lives as long as its attempt: a later mark gets it back while the attempt is open, drops it once it closed', async () => {
    const id = await publishingStory();
    const marked = (await attemptMarks.beginPublishAttempt(h.db, id))!;
    assert.equal(marked.publish_attempt_handle, null);
    const version = await attemptMarks.recordAttemptHandle(h.db, id, 'handle-1', marked.row_version);
    assert.notEqual(version, null);
    const reopened = (await attemptMarks.beginPublishAttempt(h.db, id))!;
    assert.deepEqual([reopened.earlier_attempt_open, reopened.publish_attempt_handle], [true, 'handle-1']);
    await attemptOutcomes.clearPublishAttempt(h.db, id);
    const fresh = (await attemptMarks.beginPublishAttempt(h.db, id))!;
    assert.deepEqual([fresh.earlier_attempt_open, fresh.publish_attempt_handle], [false, null]);
  });

  it('recording the handle keeps the outcome a one-statement recording (its version moves with it), unless the row was written since', async () => {
    const id = await publishingStory();
    const marked = (await attemptMarks.beginPublishAttempt(h.db, id))!;
    const version = await attemptMarks.recordAttemptHandle(h.db, id, 'handle-2', marked.row_version);
    assert.ok(version && version !== marked.row_version);
    const views = await attemptOutcomes.recordPublishedAll(h.db, [{ postId: id, platformPostId: 'm1', url: null, publishedAt: Date.now(), marked: { ...marked, row_version: version } }]);
    assert.deepEqual(views.map((v) => [v.id, v.status]), [[id, 'published']], 'recorded in one statement');

    const other = await publishingStory();
    const otherMark = (await attemptMarks.beginPublishAttempt(h.db, other))!;
    // Written by someone else since the mark: the handle is stored, but no version is given to carry on with.
    await h.db.updateTable('posts').set({ updated_at: new Date() }).where('id', '=', other).execute();
    assert.equal(await attemptMarks.recordAttemptHandle(h.db, other, 'handle-3', otherMark.row_version), null);
    assert.equal((await h.db.selectFrom('posts').select('publish_attempt_handle').where('id', '=', other).executeTakeFirstOrThrow()).publish_attempt_handle, 'handle-3');
  });
});
