import assert from 'node:assert/strict';
import { lastCreateStart, SendStopped } from '../../src/platforms/send-stop';
import { createXAdapter } from '../../src/platforms/x';
import { createThreadsAdapter } from '../../src/platforms/threads';
import { createMastodonAdapter } from '../../src/platforms/mastodon';
import { createHttpClient } from '../../src/net/http';
import { PlatformFailure, type MediaItem, type PlatformContext, type PlatformSlug, type PublishRequest } from '../../src/platforms/types';
import { startPlatformStandIns, type PlatformStandIns } from '../helpers/platform-standins';

/**
 * A send that stops at its time limit (`PublishRequest.signal`, `src/platforms/send-stop.ts`): every adapter, its
 * signal aborted before the create, sends nothing and says so (`SendStopped`: retryable, not "may have taken
 * effect"); the waits before a create (X's STATUS polls, Graph's container polls, Mastodon's media polls) end on it.
 */
describe('Platforms: a send whose time is up never begins its create', function () {
  let s: PlatformStandIns;
  const image = (n: number): MediaItem => ({ data: Buffer.from(`jpeg-${n}`), mimeType: 'image/jpeg', kind: 'image', publicUrl: `https://cdn.example/${n}.jpg` });
  const video: MediaItem = { data: Buffer.from('mp4-bytes'), mimeType: 'video/mp4', kind: 'video', publicUrl: 'https://cdn.example/v.mp4' };
  const stopped = (platform: PlatformSlug) => (err: unknown) => {
    assert.ok(err instanceof SendStopped, String(err));
    assert.deepEqual([err.platform, err.kind, err.mayHaveTakenEffect], [platform, 'retryable', false]);
    return true;
  };
  const aborted = () => AbortSignal.abort();

  before(async () => {
    s = await startPlatformStandIns();
  });
  after(async () => s?.stop());

  /** Each platform: a context on its stand-in, a request, and the creates its stand-in would record. */
  function cases(): Array<{ platform: PlatformSlug; ctx: PlatformContext; req: Omit<PublishRequest, 'postId'>; creates: () => number }> {
    const xUser = s.x.addUser({ username: `stop${Math.random().toString(36).slice(2, 8)}`, bearerToken: `x-stop-${Math.random()}` });
    const handle = `stop${Math.random().toString(36).slice(2, 8)}.test`;
    s.bluesky.addAccount({ handle, appPassword: 'stop-stop-stop-stop' });
    const token = `mastodon-stop-${Math.random()}`;
    const alice = s.mastodon.addAccount(`stop${Math.random().toString(36).slice(2, 8)}`, { token });
    const bot = `7000000002:AAHstopStopStopStopStopStopStopStop${Math.floor(Math.random() * 10)}`;
    s.telegram.addBot(bot);
    const chat = s.telegram.addChat({ username: `stop_${Math.random().toString(36).slice(2, 8)}`, title: 'Stop' });
    const posts = (standIn: { calls(method?: string, path?: string | RegExp): unknown[] }, path: RegExp) => () => standIn.calls('POST', path).length;
    return [
      { platform: 'x', ctx: { credentials: { access_token: xUser.bearerToken! }, settings: { user_id: xUser.id, username: xUser.username } }, req: { text: 'x stopped', media: [image(1)] }, creates: posts(s.x.standIn, /^\/2\/tweets$/) },
      { platform: 'bluesky', ctx: { credentials: { handle, app_password: 'stop-stop-stop-stop', service_url: s.bluesky.origin }, settings: {} }, req: { text: 'bluesky stopped', media: [] }, creates: posts(s.bluesky.standIn, /createRecord|applyWrites/) },
      { platform: 'mastodon', ctx: { credentials: { access_token: token }, settings: { instance_origin: s.mastodon.origin, account_id: alice.id, username: alice.username } }, req: { text: 'mastodon stopped', media: [] }, creates: posts(s.mastodon.standIn, /^\/api\/v1\/statuses$/) },
      { platform: 'telegram', ctx: { credentials: { bot_token: bot, chat_id: String(chat.id) }, settings: { chat_id: String(chat.id) } }, req: { text: 'telegram stopped', media: [] }, creates: posts(s.telegram.standIn, /\/send[A-Za-z]+$/) },
      { platform: 'facebook', ctx: { credentials: { page_id: s.facebook.page.id, access_token: s.facebook.page.token }, settings: {} }, req: { text: 'facebook stopped', media: [image(2)] }, creates: posts(s.facebook.standIn, /\/(feed|photo_stories|comments)$/) },
      { platform: 'instagram', ctx: { credentials: { access_token: s.instagram.user.igToken }, settings: { igUserId: s.instagram.user.igUserId, via: 'instagram' } }, req: { text: 'instagram stopped', media: [image(3)] }, creates: posts(s.instagram.standIn, /\/media_publish$/) },
      { platform: 'threads', ctx: { credentials: { access_token: s.threads.user.token }, settings: { threadsUserId: s.threads.user.id } }, req: { text: 'threads stopped', media: [] }, creates: posts(s.threads.standIn, /\/threads_publish$/) },
      { platform: 'linkedin', ctx: { credentials: { access_token: s.linkedin.member.token }, settings: { authorUrn: s.linkedin.personUrn() } }, req: { text: 'linkedin stopped', media: [] }, creates: posts(s.linkedin.standIn, /^\/rest\/posts$/) },
    ];
  }

  for (const platform of ['x', 'bluesky', 'mastodon', 'telegram', 'facebook', 'instagram', 'threads', 'linkedin'] as const) {
    it(`${platform}: its signal aborted, no create is sent and it reports SendStopped; the same call in time is sent`, async () => {
      const c = cases().find((each) => each.platform === platform)!;
      const before = c.creates();
      await assert.rejects(s.adapters[c.platform].publish(c.ctx, { postId: `stop-${c.platform}`, ...c.req, signal: aborted() }), stopped(c.platform), c.platform);
      assert.equal(c.creates(), before, `${c.platform}: a create reached the stand-in after the time was up`);
      // The stand-in and the context are right: the same request, in time, goes out.
      await s.adapters[c.platform].publish(c.ctx, { postId: `sent-${c.platform}`, ...c.req, text: `${c.req.text}, then sent`, signal: new AbortController().signal });
      assert.equal(c.creates(), before + 1, `${c.platform}: the request in time was not sent`);
    });
  }

  it('a reply (thread part, first comment) is checked as a post is: LinkedIn comments, Facebook comments, Instagram comments', async () => {
    const byPlatform = new Map(cases().map((c) => [c.platform, c]));
    const li = byPlatform.get('linkedin')!;
    const parent = await s.adapters.linkedin.publish(li.ctx, { postId: 'li-parent', text: 'parent', media: [] });
    const liComments = () => s.linkedin.standIn.calls('POST', /\/comments$/).length;
    const liBefore = liComments();
    await assert.rejects(s.adapters.linkedin.publish(li.ctx, { postId: 'li-reply', text: 'reply', media: [], replyTo: { platformPostId: parent.platformPostId }, signal: aborted() }), stopped('linkedin'));
    assert.equal(liComments(), liBefore);
    for (const platform of ['facebook', 'instagram'] as const) {
      const c = byPlatform.get(platform)!;
      const post = await s.adapters[platform].publish(c.ctx, { postId: `${platform}-parent`, text: 'parent', media: [image(9)] });
      const comments = () => s[platform].standIn.calls('POST', /\/comments$/).length;
      const before = comments();
      await assert.rejects(s.adapters[platform].publish(c.ctx, { postId: `${platform}-reply`, text: 'first comment', media: [], replyTo: { platformPostId: post.platformPostId }, signal: aborted() }), stopped(platform));
      assert.equal(comments(), before, platform);
    }
  });

  it("X: a video still processing when the time runs out ends its STATUS polls there, and its create is never sent", async () => {
    const http = createHttpClient({ allowInsecure: true, timeoutMs: 5_000 });
    const user = s.x.addUser({ username: 'stopvideo', bearerToken: 'x-stop-video' });
    const stop = new AbortController();
    let polls = 0;
    // X answers in_progress for 40 polls; the time runs out at the 3rd wait.
    s.x.config.videoPollsUntilReady = 40;
    const adapter = createXAdapter({ http, origin: s.x.origin, chunkBytes: 1024, sleep: async () => void (++polls === 3 && stop.abort()) });
    const creates = () => s.x.standIn.calls('POST', /^\/2\/tweets$/).length;
    const before = creates();
    try {
      await assert.rejects(adapter.publish({ credentials: { access_token: 'x-stop-video' }, settings: { user_id: user.id, username: user.username } }, { postId: 'v', text: 'video', media: [video], signal: stop.signal }), stopped('x'));
    } finally {
      s.x.config.videoPollsUntilReady = 2;
      await http.close();
    }
    assert.equal(polls, 3, 'the polls went on after the time was up');
    assert.equal(creates(), before);
  });

  it('Graph: containers still IN_PROGRESS when the time runs out end their polls there; no publish is called', async () => {
    const http = createHttpClient({ allowInsecure: true, timeoutMs: 5_000 });
    const stop = new AbortController();
    let polls = 0;
    s.threads.state.processingPolls = 40;
    const publishes = () => s.threads.standIn.calls('POST', /\/threads_publish$/).length;
    const before = publishes();
    const adapter = createThreadsAdapter({ http, origin: s.threads.origin, containerPolling: { intervalMs: 1, maxWaitMs: 60_000 }, sleep: async () => void (++polls === 2 && stop.abort()) });
    try {
      await assert.rejects(adapter.publish({ credentials: { access_token: s.threads.user.token }, settings: { threadsUserId: s.threads.user.id } }, { postId: 'g', text: 'image', media: [image(4)], signal: stop.signal }), stopped('threads'));
    } finally {
      s.threads.state.processingPolls = 0;
      await http.close();
    }
    assert.equal(polls, 2, 'the polls went on after the time was up');
    assert.equal(publishes(), before);
  });

  it("Mastodon: a create met by a server error is not repeated once the time is up, and says the first may have made it", async () => {
    const http = createHttpClient({ allowInsecure: true, timeoutMs: 5_000 });
    const token = 'mastodon-stop-repeat';
    const bob = s.mastodon.addAccount('stoprepeat', { token });
    const adapter = createMastodonAdapter({ http, allowInsecure: true });
    const stop = new AbortController();
    const statuses = () => s.mastodon.standIn.calls('POST', /^\/api\/v1\/statuses$/).length;
    const before = statuses();
    s.mastodon.standIn.inject({ method: 'POST', path: '/api/v1/statuses' }, { kind: 'reply', response: { status: 503, json: { error: 'down' } } });
    const ctx = { credentials: { access_token: token }, settings: { instance_origin: s.mastodon.origin, account_id: bob.id, username: 'stoprepeat' } };
    // The 503 comes back after the time ran out (aborted once the first create has gone out).
    const sending = adapter.publish(ctx, { postId: 'm', text: 'maybe made', media: [], signal: stop.signal });
    setImmediate(() => stop.abort());
    try {
      await assert.rejects(sending, (err: unknown) => err instanceof PlatformFailure && !(err instanceof SendStopped) && err.kind === 'retryable' && err.mayHaveTakenEffect);
    } finally {
      await http.close();
    }
    assert.equal(statuses(), before + 1, 'the repeat went out after the time was up');
  });

  it('the arithmetic: no create begins later than the limit less the request timeout and the margin', () => {
    assert.equal(lastCreateStart(1_000_000, 10 * 60_000), 1_000_000 + 10 * 60_000 - 30_000 - 30_000);
    assert.equal(lastCreateStart(0, 70 * 60_000, { requestTimeoutMs: 5_000, marginMs: 1_000 }), 70 * 60_000 - 6_000);
  });
});
