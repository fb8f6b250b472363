import assert from 'node:assert/strict';
import { createHttpClient, type HttpClient } from '../../src/net/http';
import { createThreadsAdapter } from '../../src/platforms/threads';
import type { MediaItem, PlatformAdapter, PlatformContext } from '../../src/platforms/types';
import { failureOf, graphErrors } from '../standins/graph';
import { startThreadsStandIn } from '../standins/threads';

describe('threads adapter against the Threads API stand-in', () => {
  let th: Awaited<ReturnType<typeof startThreadsStandIn>>;
  let http: HttpClient;
  let adapter: PlatformAdapter;
  let ctx: PlatformContext;
  let sleeps: number[];
  const image: MediaItem = { data: Buffer.from('png'), mimeType: 'image/png', kind: 'image', alt: 'not sent to threads', publicUrl: 'https://cdn.example/t.png' };
  const failure = (kind: string, message: string, retryAfterSeconds?: number) => (err: unknown) => {
    assert.deepEqual(failureOf(err), { name: 'PlatformFailure', platform: 'threads', kind, message, retryAfterSeconds });
    return true;
  };

  beforeEach(async () => {
    th = await startThreadsStandIn();
    http = createHttpClient({ allowInsecure: true, timeoutMs: 1000 });
    sleeps = [];
    // The clock moves only with the injected sleep, so the wait's deadline is counted in polls here.
    let clock = Date.now();
    adapter = createThreadsAdapter({
      http, origin: th.origin, now: () => new Date(clock), sleep: async (ms) => {
        sleeps.push(ms);
        clock += ms;
      },
      containerPolling: { intervalMs: 2000, maxWaitMs: 5000 },
    });
    ctx = { credentials: { access_token: th.user.token }, settings: { threadsUserId: th.user.id } };
  });
  afterEach(async () => {
    await http.close();
    await th.stop();
  });

  it('verifies through /me', async () => {
    assert.deepEqual(await adapter.verify({ credentials: { access_token: th.user.token }, settings: {} }), {
      platformAccountId: th.user.id, username: 'herald.threads', displayName: 'Herald Threads', profileUrl: 'https://www.threads.com/@herald.threads',
      kind: null, settings: { threadsUserId: th.user.id, username: 'herald.threads' },
    });
    assert.deepEqual(th.standIn.calls('GET', '/v1.0/me')[0].query, { fields: 'id,username,name,threads_profile_picture_url', access_token: th.user.token });
  });

  it('publishes text: quota, TEXT container, status, publish, permalink', async () => {
    const published = await adapter.publish(ctx, { postId: 'p1', text: 'Hello Threads', media: [] });
    const [post] = [...th.posts.values()];
    assert.deepEqual(published, { platformPostId: post.id, url: th.permalinkOf(post) });
    const u = th.user.id;
    assert.deepEqual(th.standIn.requests.map((r) => `${r.method} ${r.path}`), [
      `GET /v1.0/${u}/threads_publishing_limit`, `POST /v1.0/${u}/threads`, `GET /v1.0/${post.containerId}`, `POST /v1.0/${u}/threads_publish`, `GET /v1.0/${post.id}`,
    ]);
    assert.deepEqual(th.standIn.calls('GET', `/v1.0/${u}/threads_publishing_limit`)[0].query, { fields: 'quota_usage,config', access_token: th.user.token });
    assert.deepEqual(th.standIn.calls('POST', `/v1.0/${u}/threads`)[0].form, { media_type: 'TEXT', text: 'Hello Threads', access_token: th.user.token });
    assert.deepEqual(th.standIn.calls('POST', `/v1.0/${u}/threads_publish`)[0].form, { creation_id: post.containerId, access_token: th.user.token });
    assert.deepEqual(th.standIn.calls('GET', `/v1.0/${post.id}`)[0].query, { fields: 'permalink', access_token: th.user.token });
    assert.equal(th.quota.posts, 1);
  });

  it('publishes an image by URL (no alt text: Threads is not sent one) after polling', async () => {
    th.state.processingPolls = 2;
    await adapter.publish(ctx, { postId: 'p2', text: 'Look', media: [image] });
    assert.deepEqual(th.standIn.calls('POST', `/v1.0/${th.user.id}/threads`)[0].form, { media_type: 'IMAGE', image_url: 'https://cdn.example/t.png', text: 'Look', access_token: th.user.token });
    assert.deepEqual(sleeps, [2000, 2000]);
    assert.equal([...th.posts.values()][0].imageUrl, 'https://cdn.example/t.png');
  });

  it('waits for carousel children together and refuses, publishing nothing, when the post outlasts its one deadline', async () => {
    th.state.processingPolls = 2;
    const second: MediaItem = { ...image, publicUrl: 'https://cdn.example/u.png' };
    await assert.rejects(adapter.publish(ctx, { postId: 'pw', text: 'Slow pair', media: [image, second] }),
      failure('permanent', 'Threads was still processing the media after 5 seconds; nothing was published. Send the same request again.'));
    // Two waits for both children together (one after another, they took four); the parent's first would cross the deadline.
    assert.deepEqual(sleeps, [2000, 2000]);
    assert.equal(th.standIn.calls('POST', `/v1.0/${th.user.id}/threads_publish`).length, 0);
  });

  it('publishes several images as a carousel of child containers', async () => {
    const second: MediaItem = { ...image, publicUrl: 'https://cdn.example/u.png' };
    await adapter.publish(ctx, { postId: 'pc', text: 'Two', media: [image, second] });
    const forms = th.standIn.calls('POST', `/v1.0/${th.user.id}/threads`).map((c) => c.form);
    const childIds = [...th.containers.keys()].slice(0, 2);
    assert.deepEqual(forms, [
      { media_type: 'IMAGE', image_url: 'https://cdn.example/t.png', is_carousel_item: 'true', access_token: th.user.token },
      { media_type: 'IMAGE', image_url: 'https://cdn.example/u.png', is_carousel_item: 'true', access_token: th.user.token },
      { media_type: 'CAROUSEL', children: childIds.join(','), text: 'Two', access_token: th.user.token },
    ]);
    assert.deepEqual([...th.posts.values()].map((p) => p.mediaType), ['CAROUSEL']);
  });

  it('chains thread parts and first comments natively through reply_to_id, on the reply quota', async () => {
    const first = await adapter.publish(ctx, { postId: 'a', text: 'Part 1', media: [] });
    const second = await adapter.publish(ctx, { postId: 'b', text: 'Part 2', media: [], replyTo: { platformPostId: first.platformPostId } });
    const comment = await adapter.publish(ctx, { postId: 'c', text: 'First comment', media: [], replyTo: { platformPostId: second.platformPostId, rootPlatformPostId: first.platformPostId } });
    assert.deepEqual(th.standIn.calls('POST', `/v1.0/${th.user.id}/threads`).map((c) => c.form!.reply_to_id), [undefined, first.platformPostId, second.platformPostId]);
    assert.deepEqual(th.standIn.calls('GET', `/v1.0/${th.user.id}/threads_publishing_limit`).map((c) => c.query.fields), ['quota_usage,config', 'reply_quota_usage,reply_config', 'reply_quota_usage,reply_config']);
    assert.deepEqual([th.posts.get(comment.platformPostId)!.rootId, th.quota.posts, th.quota.replies], [first.platformPostId, 1, 2]);
    assert.equal(second.url, th.permalinkOf(th.posts.get(second.platformPostId)!));
  });

  it('words a container error from its error_message and publishes nothing', async () => {
    th.failingUrls.set('https://cdn.example/t.png', 'INVALID_ASPEC_RATIO');
    await assert.rejects(adapter.publish(ctx, { postId: 'p3', text: 'Wide', media: [image] }),
      failure('permanent', 'Threads refused the post: the media aspect ratio is not one Threads accepts.'));
    th.failingUrls.set('https://cdn.example/t.png', 'SOMETHING_NEW');
    await assert.rejects(adapter.publish(ctx, { postId: 'p3', text: 'Wide', media: [image] }), failure('permanent', 'Threads refused the post: Threads could not process the media.'));
    assert.equal(th.posts.size, 0);
  });

  describe('words every container error_message', () => {
    const rows: Array<[string, string]> = [
      ['FAILED_DOWNLOADING_VIDEO', 'Threads could not download the video'],
      ['FAILED_PROCESSING_AUDIO', 'Threads could not process the audio'],
      ['FAILED_PROCESSING_VIDEO', 'Threads could not process the video'],
      ['INVALID_ASPEC_RATIO', 'the media aspect ratio is not one Threads accepts'],
      ['INVALID_BIT_RATE', 'the video bit rate is not one Threads accepts'],
      ['INVALID_DURATION', 'the video is longer or shorter than Threads accepts'],
      ['INVALID_FRAME_RATE', 'the video frame rate is not one Threads accepts'],
      ['INVALID_AUDIO_CHANNELS', 'the number of audio channels is not one Threads accepts'],
      ['INVALID_AUDIO_CHANNEL_LAYOUT', 'the audio channel layout is not one Threads accepts'],
      ['UNKNOWN', 'Threads could not process the media'],
    ];
    for (const [code, reason] of rows) {
      it(code, async () => {
        th.failingUrls.set('https://cdn.example/t.png', code);
        await assert.rejects(adapter.publish(ctx, { postId: code, text: 'x', media: [image] }), failure('permanent', `Threads refused the post: ${reason}.`));
        assert.equal(th.posts.size, 0);
      });
    }
  });

  it('the stand-in counts text as Threads does: emoji are their UTF-8 bytes', async () => {
    await adapter.publish(ctx, { postId: 'len1', text: `${'a'.repeat(496)}👍`, media: [] });
    await assert.rejects(adapter.publish(ctx, { postId: 'len2', text: `${'a'.repeat(497)}👍`, media: [] }),
      failure('permanent', 'Threads refused the post: Threads did not accept a parameter of the request.'));
    assert.equal(th.posts.size, 1);
  });

  it('refuses before creating a container when the 250 posts or 1,000 replies per 24 h are spent', async () => {
    th.quota.posts = 250;
    await assert.rejects(adapter.publish(ctx, { postId: 'p4', text: 'One more', media: [] }),
      failure('rate_limited', 'Threads allows 250 API-published posts per 24 hours and this account has reached that limit.'));
    th.quota.posts = 0;
    const root = await adapter.publish(ctx, { postId: 'p5', text: 'root', media: [] });
    th.quota.replies = 1000;
    await assert.rejects(adapter.publish(ctx, { postId: 'p6', text: 'reply', media: [], replyTo: { platformPostId: root.platformPostId } }),
      failure('rate_limited', 'Threads allows 1000 API-published replies per 24 hours and this account has reached that limit.'));
    assert.equal(th.containers.size, 1);
  });

  it('keeps a post whose permalink is not given or could not be read, tells the two apart, and resolveUrl asks again', async () => {
    th.state.withholdPermalinks = true;
    const published = await adapter.publish(ctx, { postId: 'p7', text: 'No link', media: [] });
    assert.deepEqual(published, { platformPostId: published.platformPostId, url: null }, 'none given: not unread');
    th.state.withholdPermalinks = false;
    assert.equal(await adapter.resolveUrl!(ctx, published.platformPostId), th.permalinkOf(th.posts.get(published.platformPostId)!));
    th.state.permalinkFailures = 1;
    const unread = await adapter.publish(ctx, { postId: 'p7b', text: 'Link unread', media: [] });
    assert.deepEqual(unread, { platformPostId: unread.platformPostId, url: null, urlUnread: true });
    assert.equal(await adapter.resolveUrl!(ctx, unread.platformPostId), th.permalinkOf(th.posts.get(unread.platformPostId)!));
  });

  it('finds no text-less post by lookup: anything in the window would match, so the outcome stays unknown', async () => {
    // Posted by hand, as far as Herald can tell: nothing ties it to the attempt being settled.
    await adapter.publish(ctx, { postId: 'hand', text: '', media: [image] });
    await assert.rejects(adapter.findPublished!(ctx, { postId: 'p8e', text: '', media: [image] }),
      failure('unknown_outcome', 'Threads did not answer in time; the post may have been published.'));
  });

  it('does not duplicate a post whose publish answer was lost', async () => {
    th.standIn.inject({ method: 'POST', path: `/v1.0/${th.user.id}/threads_publish` }, { kind: 'hang', thenHandle: true });
    const published = await adapter.publish(ctx, { postId: 'p8', text: 'Exactly once', media: [] });
    assert.equal(th.posts.size, 1);
    assert.equal(published.platformPostId, [...th.posts.keys()][0]);
    assert.equal(th.standIn.calls('POST', `/v1.0/${th.user.id}/threads_publish`).length, 1);
    assert.deepEqual(await adapter.findPublished!(ctx, { postId: 'p8', text: 'Exactly once', media: [] }), published);
  });

  it('a lost publish answer stays unknown when the reads that would settle it fail: never a second post, never "reconnect"', async () => {
    const u = th.user.id;
    // The status read answers Graph code 2 ("nothing was changed"): a retry would publish a second copy.
    th.standIn.inject({ method: 'POST', path: `/v1.0/${u}/threads_publish` }, { kind: 'hang', thenHandle: true });
    const publishing = adapter.publish(ctx, { postId: 'lost1', text: 'Only once', media: [] });
    // Once the publish is sent (its answer hangs), the next status read is the one after the lost answer.
    while (th.standIn.calls('POST', `/v1.0/${u}/threads_publish`).length === 0) await new Promise((r) => setTimeout(r, 10));
    th.standIn.inject({ method: 'GET', path: /^\/v1\.0\/\d+$/ }, { kind: 'reply', response: graphErrors.transient() });
    await assert.rejects(publishing, failure('unknown_outcome', 'Threads did not answer in time; it may have published the post.'));
    // The container reads PUBLISHED, and the search of recent posts answers a permission error (code 10).
    th.standIn.inject({ method: 'POST', path: `/v1.0/${u}/threads_publish` }, { kind: 'hang', thenHandle: true });
    th.standIn.inject({ method: 'GET', path: `/v1.0/${u}/threads` }, { kind: 'reply', response: graphErrors.permission(10) });
    await assert.rejects(adapter.publish(ctx, { postId: 'lost2', text: 'Also once', media: [] }), failure('unknown_outcome', 'Threads did not answer in time; it may have published the post.'));
    assert.deepEqual([...th.posts.values()].map((p) => p.text), ['Only once', 'Also once']);
    assert.equal(th.standIn.calls('POST', `/v1.0/${u}/threads_publish`).length, 2);
  });

  it('deletes its posts; already deleted is gone; a connection without the delete permission is told to reconnect', async () => {
    const post = await adapter.publish(ctx, { postId: 'p9', text: 'Bye', media: [] });
    th.user.canDelete = false;
    await assert.rejects(adapter.delete(ctx, post.platformPostId),
      failure('permanent', 'Threads refused to delete the post: this connection was made without the permission to delete posts; reconnect the account to allow deletes.'));
    assert.equal(th.posts.size, 1);
    th.user.canDelete = true;
    await adapter.delete(ctx, post.platformPostId);
    assert.equal(th.posts.size, 0);
    await adapter.delete(ctx, post.platformPostId);
  });

  it('a delete answered 100/33 for a post or reply still there is a refusal, not gone', async () => {
    const post = await adapter.publish(ctx, { postId: 'p9b', text: 'Stays', media: [] });
    const reply = await adapter.replyToComment!(ctx, post.platformPostId, post.platformPostId, 'mine');
    th.standIn.inject({ method: 'DELETE' }, { kind: 'reply', response: graphErrors.unknownObject(post.platformPostId, 'delete') });
    await assert.rejects(adapter.delete(ctx, post.platformPostId), failure('permanent', 'Threads refused to delete the post: Threads did not allow this connection to delete it; nothing was changed.'));
    th.standIn.inject({ method: 'DELETE' }, { kind: 'reply', response: graphErrors.unknownObject(reply.platformPostId, 'delete') });
    await assert.rejects(adapter.deleteComment!(ctx, reply.platformPostId), failure('permanent', 'Threads refused to delete the comment: Threads did not allow this connection to delete it; nothing was changed.'));
    assert.deepEqual([th.posts.has(post.platformPostId), th.posts.has(reply.platformPostId)], [true, true]);
  });

  it('lists the whole conversation newest first with cursors, parents and ownership', async () => {
    const post = await adapter.publish(ctx, { postId: 'p10', text: 'Discuss', media: [] });
    const top = th.addExternalReply(post.platformPostId, 'top-level');
    const nested = th.addExternalReply(top.id, 'nested');
    const mine = await adapter.replyToComment!(ctx, post.platformPostId, nested.id, 'mine');
    for (let i = 0; i < 24; i++) th.addExternalReply(post.platformPostId, `more ${i}`);
    const page1 = await adapter.listComments!(ctx, post.platformPostId);
    assert.equal(page1.comments.length, 25);
    assert.deepEqual(th.standIn.calls('GET', `/v1.0/${post.platformPostId}/conversation`)[0].query, {
      fields: 'id,text,username,timestamp,replied_to,is_reply_owned_by_me,hide_status,has_replies', reverse: 'true', limit: '25', access_token: th.user.token,
    });
    assert.equal(page1.comments[0].text, 'more 23');
    const page2 = await adapter.listComments!(ctx, post.platformPostId, page1.nextCursor!);
    assert.equal(page2.nextCursor, null);
    assert.deepEqual(page2.comments.map((c) => [c.text, c.platformParentId, c.own, c.replies]), [
      ['nested', top.id, false, 1], ['top-level', null, false, 1],
    ]);
    assert.deepEqual(page1.comments[24], {
      platformCommentId: mine.platformPostId, platformParentId: nested.id, author: { handle: 'herald.threads', displayName: 'herald.threads', platformId: 'herald.threads', avatarUrl: null },
      text: 'mine', createdAt: th.posts.get(mine.platformPostId)!.timestamp.replace(/\.\d{3}Z$/, '.000Z'), likes: 0, replies: 0, own: true,
    });
  });

  it('hides top-level replies only, deletes its own replies only', async () => {
    const post = await adapter.publish(ctx, { postId: 'p11', text: 'Moderate', media: [] });
    const top = th.addExternalReply(post.platformPostId, 'loud');
    const nested = th.addExternalReply(top.id, 'louder');
    await adapter.hideComment!(ctx, top.id, true);
    assert.deepEqual(th.standIn.calls('POST', `/v1.0/${top.id}/manage_reply`)[0].form, { hide: 'true', access_token: th.user.token });
    assert.equal(th.posts.get(top.id)!.hidden, true);
    await adapter.hideComment!(ctx, top.id, false);
    assert.equal(th.posts.get(top.id)!.hidden, false);
    await assert.rejects(adapter.hideComment!(ctx, nested.id, true), failure('permanent', 'Threads refused to change the comment: Threads did not accept a parameter of the request.'));
    const mine = await adapter.replyToComment!(ctx, post.platformPostId, top.id, 'calm down');
    assert.equal(th.posts.get(mine.platformPostId)!.replyToId, top.id);
    await adapter.deleteComment!(ctx, mine.platformPostId);
    assert.equal(th.posts.has(mine.platformPostId), false);
    await assert.rejects(adapter.deleteComment!(ctx, top.id), failure('permanent', 'Threads refused to delete the comment: Threads did not accept a parameter of the request.'));
  });

  it('classifies token, throttling and transient answers with the Graph table', async () => {
    th.standIn.inject({ method: 'GET' }, { kind: 'reply', response: graphErrors.throttled(4, 3) });
    await assert.rejects(adapter.publish(ctx, { postId: 'e1', text: 'x', media: [] }), failure('rate_limited', 'Threads refused the post: Threads is rate limiting this account.', 180));
    th.standIn.inject({ method: 'POST' }, { kind: 'reply', response: graphErrors.transient() });
    await assert.rejects(adapter.publish(ctx, { postId: 'e2', text: 'x', media: [] }), failure('retryable', 'Threads refused the post: Threads had a temporary problem; nothing was changed.'));
    await assert.rejects(adapter.verify({ credentials: { access_token: 'bad' }, settings: {} }),
      failure('reauthorize', 'Threads refused the connection: Threads no longer accepts this connection; reconnect the account.'));
    assert.equal(th.posts.size, 0);
  });
});
