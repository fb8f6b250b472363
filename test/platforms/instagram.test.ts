import assert from 'node:assert/strict';
import { createHttpClient, type HttpClient } from '../../src/net/http';
import { deleteSupported } from '../../src/platforms/capabilities';
import { createInstagramAdapter } from '../../src/platforms/instagram';
import type { MediaItem, PlatformAdapter, PlatformContext } from '../../src/platforms/types';
import { failureOf, graphError, graphErrors } from '../standins/graph';
import { startInstagramStandIn } from '../standins/instagram';

describe('instagram adapter against the content-publishing stand-in', () => {
  let ig: Awaited<ReturnType<typeof startInstagramStandIn>>;
  let http: HttpClient;
  let adapter: PlatformAdapter;
  let ctx: PlatformContext;
  let fbCtx: PlatformContext;
  let sleeps: number[];
  const image = (n: number, alt?: string): MediaItem => ({ data: Buffer.from('jpeg'), mimeType: 'image/jpeg', kind: 'image', alt, publicUrl: `https://cdn.example/${n}.jpg` });
  const video: MediaItem = { data: Buffer.from('mp4'), mimeType: 'video/mp4', kind: 'video', publicUrl: 'https://cdn.example/v.mp4' };
  const failure = (kind: string, message: string, retryAfterSeconds?: number) => (err: unknown) => {
    assert.deepEqual(failureOf(err), { name: 'PlatformFailure', platform: 'instagram', kind, message, retryAfterSeconds });
    return true;
  };

  beforeEach(async () => {
    ig = await startInstagramStandIn();
    http = createHttpClient({ allowInsecure: true, timeoutMs: 1000 });
    sleeps = [];
    // The clock moves only with the injected sleep, so the wait's deadline is counted in polls here.
    let clock = Date.now();
    adapter = createInstagramAdapter({
      http, origin: ig.origin, facebookOrigin: ig.facebookOrigin, now: () => new Date(clock), sleep: async (ms) => {
        sleeps.push(ms);
        clock += ms;
      },
      containerPolling: { intervalMs: 1000, maxWaitMs: 3500 },
    });
    ctx = { credentials: { access_token: ig.user.igToken }, settings: { igUserId: ig.user.igUserId, via: 'instagram' } };
    fbCtx = { credentials: { access_token: ig.user.fbToken, via: 'facebook', ig_user_id: ig.user.igUserId }, settings: {} };
  });
  afterEach(async () => {
    await http.close();
    await ig.stop();
  });

  it('verifies an Instagram-login account through /me (user_id, not the app-scoped id)', async () => {
    const identity = await adapter.verify({ credentials: { access_token: ig.user.igToken }, settings: {} });
    assert.deepEqual(identity, {
      platformAccountId: ig.user.igUserId, username: 'herald.gram', displayName: 'Herald Gram', profileUrl: 'https://www.instagram.com/herald.gram/',
      kind: null, settings: { igUserId: ig.user.igUserId, via: 'instagram', username: 'herald.gram' },
    });
    assert.deepEqual(ig.standIn.calls('GET').map((c) => [c.path, c.query]), [['/v25.0/me', { fields: 'user_id,username,name', access_token: ig.user.igToken }]]);
  });

  it('verifies a Facebook-login account through its ig_user_id on the Facebook origin', async () => {
    const identity = await adapter.verify(fbCtx);
    assert.equal(identity.platformAccountId, ig.user.igUserId);
    assert.deepEqual(identity.settings, { igUserId: ig.user.igUserId, via: 'facebook', username: 'herald.gram' });
    assert.deepEqual(ig.standIn.calls('GET').map((c) => c.path), [`/fb/v25.0/${ig.user.igUserId}`]);
  });

  it('publishes one image: quota check, container with caption, alt text and options, status poll, publish, permalink', async () => {
    const published = await adapter.publish(ctx, {
      postId: 'p1', text: 'Sunset', media: [image(1, 'Orange sky over the sea')],
      configuration: { collaborators: ['friend.one'], user_tags: [{ username: 'friend.two', x: 0.5, y: 0.5 }] },
    });
    const [item] = [...ig.media.values()];
    assert.deepEqual(published, { platformPostId: item.id, url: `https://www.instagram.com/p/${item.shortcode}/` });
    const u = ig.user.igUserId;
    assert.deepEqual(ig.standIn.requests.map((r) => `${r.method} ${r.path}`), [
      `GET /v25.0/${u}/content_publishing_limit`, `POST /v25.0/${u}/media`, `GET /v25.0/${item.containerId}`, `POST /v25.0/${u}/media_publish`, `GET /v25.0/${item.id}`,
    ]);
    assert.deepEqual(ig.standIn.calls('POST', `/v25.0/${u}/media`)[0].form, {
      image_url: 'https://cdn.example/1.jpg', alt_text: 'Orange sky over the sea', caption: 'Sunset', collaborators: '["friend.one"]',
      user_tags: '[{"username":"friend.two","x":0.5,"y":0.5}]', access_token: ig.user.igToken,
    });
    assert.deepEqual(ig.standIn.calls('GET', `/v25.0/${item.containerId}`)[0].query, { fields: 'status_code,status', access_token: ig.user.igToken });
    assert.deepEqual(ig.standIn.calls('POST', `/v25.0/${u}/media_publish`)[0].form, { creation_id: item.containerId, access_token: ig.user.igToken });
    assert.equal(ig.quota.usage, 1);
    assert.deepEqual(sleeps, []);
  });

  it('polls a processing container with the injected sleep until FINISHED', async () => {
    ig.state.processingPolls = 2;
    await adapter.publish(ctx, { postId: 'p2', text: 'Wait for it', media: [image(1)] });
    assert.deepEqual(sleeps, [1000, 1000]);
    assert.equal(ig.media.size, 1);
  });

  it('gives up at the deadline without publishing', async () => {
    ig.state.processingPolls = 10;
    await assert.rejects(adapter.publish(ctx, { postId: 'p3', text: 'Slow', media: [image(1)] }),
      failure('permanent', 'Instagram was still processing the media after 3.5 seconds; nothing was published. Send the same request again.'));
    assert.deepEqual(sleeps, [1000, 1000, 1000]);
    assert.equal(ig.media.size, 0);
    assert.equal(ig.standIn.calls('POST', `/v25.0/${ig.user.igUserId}/media_publish`).length, 0);
  });

  it('refuses media the container could not fetch, publishing nothing', async () => {
    ig.failingUrls.add('https://cdn.example/9.jpg');
    await assert.rejects(adapter.publish(ctx, { postId: 'p4', text: 'Broken', media: [image(9)] }),
      failure('permanent', 'Instagram refused the post: Instagram could not process the media.'));
    assert.equal(ig.media.size, 0);
  });

  it('publishes a carousel from child containers, alt text per image', async () => {
    const published = await adapter.publish(ctx, { postId: 'p5', text: 'Three', media: [image(1, 'one'), image(2), image(3, 'three')], configuration: { user_tags: [{ username: 'tagged', x: 0.1, y: 0.2 }] } });
    const forms = ig.standIn.calls('POST', `/v25.0/${ig.user.igUserId}/media`).map((c) => c.form);
    assert.deepEqual(forms.slice(0, 3), [
      { is_carousel_item: 'true', image_url: 'https://cdn.example/1.jpg', alt_text: 'one', user_tags: '[{"username":"tagged","x":0.1,"y":0.2}]', access_token: ig.user.igToken },
      { is_carousel_item: 'true', image_url: 'https://cdn.example/2.jpg', access_token: ig.user.igToken },
      { is_carousel_item: 'true', image_url: 'https://cdn.example/3.jpg', alt_text: 'three', access_token: ig.user.igToken },
    ]);
    const childIds = [...ig.containers.keys()].slice(0, 3);
    assert.deepEqual(forms[3], { media_type: 'CAROUSEL', children: childIds.join(','), caption: 'Three', access_token: ig.user.igToken });
    const item = ig.media.get(published.platformPostId)!;
    assert.deepEqual([item.kind, item.children.map((c) => c.id)], ['carousel', childIds]);
    assert.equal(ig.quota.usage, 1);
  });

  it('waits for carousel children together, all containers of the post against one deadline', async () => {
    ig.state.processingPolls = 1;
    const u = ig.user.igUserId;
    await adapter.publish(ctx, { postId: 'p5w', text: 'Together', media: [image(1), image(2), image(3)] });
    // One wait for the three children, one for the parent: read one after another, they took a wait each.
    assert.deepEqual(sleeps, [1000, 1000]);
    const childIds = [...ig.containers.keys()].slice(0, 3);
    assert.deepEqual(ig.standIn.requests.slice(0, 10).map((r) => `${r.method} ${r.path}`), [
      `GET /v25.0/${u}/content_publishing_limit`, `POST /v25.0/${u}/media`, `POST /v25.0/${u}/media`, `POST /v25.0/${u}/media`,
      ...childIds.map((id) => `GET /v25.0/${id}`), ...childIds.map((id) => `GET /v25.0/${id}`),
    ]);
    assert.equal(ig.media.size, 1);
  });

  it('refuses a carousel whose containers outlast the one deadline, publishing nothing', async () => {
    ig.state.processingPolls = 2;
    // Three polls' worth of wait: the children take two, and the parent's one more would cross the deadline.
    await assert.rejects(adapter.publish(ctx, { postId: 'p5d', text: 'Too slow', media: [image(1), image(2)] }),
      failure('permanent', 'Instagram was still processing the media after 3.5 seconds; nothing was published. Send the same request again.'));
    assert.deepEqual(sleeps, [1000, 1000, 1000]);
    assert.equal(ig.standIn.calls('POST', `/v25.0/${ig.user.igUserId}/media_publish`).length, 0);
    assert.equal(ig.media.size, 0);
  });

  it('takes a video as a carousel child (media_type VIDEO) and polls it', async () => {
    await adapter.publish(ctx, { postId: 'p5v', text: 'Mixed', media: [image(1), video] });
    const forms = ig.standIn.calls('POST', `/v25.0/${ig.user.igUserId}/media`).map((c) => c.form);
    assert.deepEqual(forms[1], { is_carousel_item: 'true', media_type: 'VIDEO', video_url: 'https://cdn.example/v.mp4', access_token: ig.user.igToken });
    assert.deepEqual(sleeps, [1000]);
    assert.equal([...ig.media.values()][0].kind, 'carousel');
  });

  it('publishes a story (no caption) and gives the link Instagram gives', async () => {
    const published = await adapter.publish(ctx, { postId: 'p6', text: '', media: [image(1)], configuration: { placement: 'story', user_tags: [{ username: 'pal' }] } });
    assert.deepEqual(ig.standIn.calls('POST', `/v25.0/${ig.user.igUserId}/media`)[0].form, {
      media_type: 'STORIES', image_url: 'https://cdn.example/1.jpg', user_tags: '[{"username":"pal"}]', access_token: ig.user.igToken,
    });
    const item = ig.media.get(published.platformPostId)!;
    assert.equal(published.url, `https://www.instagram.com/stories/herald.gram/${item.containerId}/`);
  });

  it('publishes a reel from a video URL with its options', async () => {
    const published = await adapter.publish(ctx, {
      postId: 'p7', text: 'Reel time', media: [video],
      configuration: { placement: 'reel', cover: 'https://cdn.example/cover.jpg', video_cover_timestamp_ms: 1500, share_to_feed: false, trial_reel: true, collaborators: ['c1'] },
    });
    assert.deepEqual(ig.standIn.calls('POST', `/v25.0/${ig.user.igUserId}/media`)[0].form, {
      media_type: 'REELS', video_url: 'https://cdn.example/v.mp4', caption: 'Reel time', collaborators: '["c1"]', cover_url: 'https://cdn.example/cover.jpg',
      thumb_offset: '1500', share_to_feed: 'false', trial_params: '{"graduation_strategy":"MANUAL"}', access_token: ig.user.igToken,
    });
    assert.deepEqual(sleeps, [1000]);
    assert.match(published.url!, /^https:\/\/www\.instagram\.com\/reel\/C\d+\/$/);
  });

  it('keeps a published post when its link is missing or unreadable, and resolveUrl asks again', async () => {
    ig.state.permalinkFailures = 1;
    const published = await adapter.publish(ctx, { postId: 'p8', text: 'No link yet', media: [image(1)] });
    assert.deepEqual(published, { platformPostId: published.platformPostId, url: null, urlUnread: true });
    assert.equal(ig.media.size, 1);
    assert.equal(await adapter.resolveUrl!(ctx, published.platformPostId), `https://www.instagram.com/p/${ig.media.get(published.platformPostId)!.shortcode}/`);
    ig.noPermalink.add(published.platformPostId);
    assert.equal(await adapter.resolveUrl!(ctx, published.platformPostId), null);
  });

  it('refuses before creating containers when the 24-hour publishing quota is spent', async () => {
    ig.quota.usage = 100;
    await assert.rejects(adapter.publish(ctx, { postId: 'p9', text: 'Too many', media: [image(1)] }),
      failure('rate_limited', 'Instagram allows 100 API-published posts per 24 hours and this account has reached that limit.'));
    assert.equal(ig.containers.size, 0);
  });

  it('classifies the publish-limit error of media_publish as rate limited', async () => {
    ig.standIn.inject({ method: 'POST', path: `/v25.0/${ig.user.igUserId}/media_publish` }, { kind: 'reply', response: graphError({ code: 9, subcode: 2207042, message: 'limit' }) });
    await assert.rejects(adapter.publish(ctx, { postId: 'p10', text: 'x', media: [image(1)] }),
      failure('rate_limited', 'Instagram refused the post: Instagram allows no more API-published posts for this account in the last 24 hours.'));
  });

  it('does not publish twice when media_publish answered nothing but the post went out', async () => {
    ig.standIn.inject({ method: 'POST', path: `/v25.0/${ig.user.igUserId}/media_publish` }, { kind: 'hang', thenHandle: true });
    const published = await adapter.publish(ctx, { postId: 'p11', text: 'Once only', media: [image(1)] });
    assert.equal(ig.media.size, 1);
    const [item] = [...ig.media.values()];
    assert.deepEqual(published, { platformPostId: item.id, url: `https://www.instagram.com/p/${item.shortcode}/` });
    assert.equal(ig.standIn.calls('POST', `/v25.0/${ig.user.igUserId}/media_publish`).length, 1);
  });

  it('publishes the unused container again when the lost publish never happened', async () => {
    ig.standIn.inject({ method: 'POST', path: `/v25.0/${ig.user.igUserId}/media_publish` }, { kind: 'reset' });
    const published = await adapter.publish(ctx, { postId: 'p12', text: 'Second try', media: [image(1)] });
    assert.equal(ig.media.size, 1);
    assert.equal(published.platformPostId, [...ig.media.keys()][0]);
    assert.equal(ig.standIn.calls('POST', `/v25.0/${ig.user.igUserId}/media_publish`).length, 2);
  });

  it('finds a lost post by caption and reports none when nothing matches', async () => {
    const published = await adapter.publish(ctx, { postId: 'p13', text: 'Find me', media: [image(1)] });
    assert.deepEqual(await adapter.findPublished!(ctx, { postId: 'p13', text: 'Find me', media: [image(1)] }), published);
    assert.equal(await adapter.findPublished!(ctx, { postId: 'p14', text: 'Not there', media: [image(1)] }), null);
  });

  it('finds no story or caption-less post by lookup: anything in the window would match, so the outcome stays unknown', async () => {
    // Posted by hand, as far as Herald can tell: nothing ties either to the attempt being settled.
    await adapter.publish(ctx, { postId: 'hand1', text: '', media: [image(1)], configuration: { placement: 'story' } });
    await adapter.publish(ctx, { postId: 'hand2', text: '', media: [image(2)] });
    await assert.rejects(adapter.findPublished!(ctx, { postId: 'p13s', text: '', media: [image(3)], configuration: { placement: 'story' } }),
      failure('unknown_outcome', 'Instagram did not answer in time; the story may have been published.'));
    await assert.rejects(adapter.findPublished!(ctx, { postId: 'p13c', text: '', media: [image(4)] }),
      failure('unknown_outcome', 'Instagram did not answer in time; the post may have been published.'));
  });

  it('publishes a first comment on its own media', async () => {
    const post = await adapter.publish(ctx, { postId: 'p15', text: 'Main', media: [image(1)] });
    const comment = await adapter.publish(ctx, { postId: 'p16', text: 'Link in bio', media: [], replyTo: { platformPostId: post.platformPostId } });
    assert.deepEqual(comment, { platformPostId: [...ig.comments.keys()][0], url: null });
    const stored = ig.comments.get(comment.platformPostId)!;
    assert.deepEqual([stored.mediaId, stored.text, stored.from.id], [post.platformPostId, 'Link in bio', ig.user.igUserId]);
    assert.equal(ig.quota.usage, 1);
  });

  it('does not duplicate a first comment whose answer was lost', async () => {
    const post = await adapter.publish(ctx, { postId: 'p16b', text: 'Main', media: [image(1)] });
    ig.standIn.inject({ method: 'POST', path: `/v25.0/${post.platformPostId}/comments` }, { kind: 'hang', thenHandle: true });
    const comment = await adapter.publish(ctx, { postId: 'p16c', text: 'Only once', media: [], replyTo: { platformPostId: post.platformPostId } });
    assert.equal(ig.comments.size, 1);
    assert.deepEqual(comment, { platformPostId: [...ig.comments.keys()][0], url: null });
  });

  it('deletes through the Facebook login only; already-deleted counts as gone', async () => {
    const post = await adapter.publish(fbCtx, { postId: 'p17', text: 'Via FB', media: [image(1)] });
    assert.equal(ig.standIn.calls('POST', `/fb/v25.0/${ig.user.igUserId}/media_publish`).length, 1);
    await adapter.delete(fbCtx, post.platformPostId);
    assert.equal(ig.media.size, 0);
    await adapter.delete(fbCtx, post.platformPostId);
    const before = ig.standIn.requests.length;
    await assert.rejects(adapter.delete(ctx, post.platformPostId),
      failure('permanent', 'Instagram does not let accounts connected via Instagram delete posts; connect the account via Facebook to delete.'));
    assert.equal(ig.standIn.requests.length, before);
  });

  it('states the delete exceptions as capability data', () => {
    assert.deepEqual(
      [deleteSupported('instagram'), deleteSupported('instagram', { via: 'instagram', placement: 'reel' }), deleteSupported('instagram', { via: 'facebook', placement: 'story' }),
        deleteSupported('facebook'), deleteSupported('facebook', { placement: 'story' }), deleteSupported('threads'), deleteSupported('linkedin')],
      [false, false, true, true, false, true, true],
    );
  });

  it('lists comments with their replies (draining reply pages) and top-level cursor paging', async () => {
    await ig.stop();
    ig = await startInstagramStandIn({ nestedReplyPageSize: 2 });
    adapter = createInstagramAdapter({ http, origin: ig.origin, facebookOrigin: ig.facebookOrigin, sleep: async () => undefined, containerPolling: { intervalMs: 1, maxWaitMs: 2 } });
    const post = await adapter.publish(ctx, { postId: 'p18', text: 'Talk', media: [image(1)] });
    const top = ig.addExternalComment(post.platformPostId, 'first!');
    for (let i = 0; i < 3; i++) ig.addExternalComment(top.id, `reply ${i}`);
    const own = await adapter.replyToComment!(ctx, post.platformPostId, top.id, 'thank you');
    for (let i = 1; i < 27; i++) ig.addExternalComment(post.platformPostId, `comment ${i}`);
    const page1 = await adapter.listComments!(ctx, post.platformPostId);
    assert.deepEqual(page1.comments.slice(0, 5).map((c) => [c.text, c.platformParentId, c.replies, c.own]), [
      ['first!', null, 4, false], ['reply 0', top.id, 0, false], ['reply 1', top.id, 0, false], ['reply 2', top.id, 0, false], ['thank you', top.id, 0, true],
    ]);
    assert.deepEqual(page1.comments[4], {
      platformCommentId: own.platformPostId, platformParentId: top.id, author: { handle: 'herald.gram', displayName: 'herald.gram', platformId: ig.user.igUserId, avatarUrl: null },
      text: 'thank you', createdAt: new Date(ig.comments.get(own.platformPostId)!.timestamp).toISOString(), likes: 0, replies: 0, own: true,
    });
    assert.equal(page1.comments.length, 29);
    assert.equal(ig.standIn.calls('GET', `/v25.0/${top.id}/replies`).length, 1);
    const page2 = await adapter.listComments!(ctx, post.platformPostId, page1.nextCursor!);
    assert.deepEqual(page2.comments.map((c) => c.text), ['comment 25', 'comment 26']);
    assert.equal(page2.nextCursor, null);
  });

  it('replies, hides, unhides and deletes any comment; a hidden comment takes no reply', async () => {
    const post = await adapter.publish(ctx, { postId: 'p19', text: 'Moderate', media: [image(1)] });
    const c = ig.addExternalComment(post.platformPostId, 'spam');
    const reply = await adapter.replyToComment!(ctx, post.platformPostId, c.id, 'no thanks');
    assert.deepEqual(ig.standIn.calls('POST', `/v25.0/${c.id}/replies`)[0].form, { message: 'no thanks', access_token: ig.user.igToken });
    assert.equal(ig.comments.get(reply.platformPostId)!.parentId, c.id);
    await adapter.hideComment!(ctx, c.id, true);
    assert.deepEqual(ig.standIn.calls('POST', `/v25.0/${c.id}`)[0].form, { hide: 'true', access_token: ig.user.igToken });
    await assert.rejects(adapter.replyToComment!(ctx, post.platformPostId, c.id, 'again'),
      failure('permanent', 'Instagram refused the reply: Instagram did not accept a parameter of the request.'));
    await adapter.hideComment!(ctx, c.id, false);
    assert.equal(ig.comments.get(c.id)!.hidden, false);
    await adapter.deleteComment!(ctx, c.id);
    assert.equal(ig.comments.size, 0);
    await adapter.deleteComment!(ctx, c.id);
  });

  it('reads the throttling wait from the business-use-case header and asks to reconnect on a bad token', async () => {
    ig.standIn.inject({ method: 'GET' }, { kind: 'reply', response: graphErrors.throttled(80002, 7) });
    await assert.rejects(adapter.listComments!(ctx, '1'), failure('rate_limited', 'Instagram refused to list the comments: Instagram is rate limiting this account.', 420));
    ctx.credentials.access_token = 'expired';
    await assert.rejects(adapter.publish(ctx, { postId: 'p20', text: 'x', media: [image(1)] }),
      failure('reauthorize', 'Instagram refused the post: Instagram no longer accepts this connection; reconnect the account.'));
  });
});
