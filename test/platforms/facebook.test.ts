import assert from 'node:assert/strict';
import { createHttpClient, type HttpClient } from '../../src/net/http';
import { createFacebookAdapter } from '../../src/platforms/facebook';
import type { MediaItem, PlatformAdapter, PlatformContext } from '../../src/platforms/types';
import { startFacebookStandIn } from '../standins/facebook';
import { failureOf, graphError, graphErrors } from '../standins/graph';

describe('facebook adapter against the Graph stand-in', () => {
  let fb: Awaited<ReturnType<typeof startFacebookStandIn>>;
  let http: HttpClient;
  let adapter: PlatformAdapter;
  let ctx: PlatformContext;
  const png = (alt?: string, publicUrl?: string): MediaItem => ({ data: Buffer.from('png-bytes'), mimeType: 'image/png', kind: 'image', alt, publicUrl });

  beforeEach(async () => {
    fb = await startFacebookStandIn();
    http = createHttpClient({ allowInsecure: true, timeoutMs: 1000 });
    adapter = createFacebookAdapter({ http, origin: fb.origin });
    ctx = { credentials: { page_id: fb.page.id, access_token: fb.page.token }, settings: {} };
  });
  afterEach(async () => {
    await http.close();
    await fb.stop();
  });

  it('verifies the Page through /me with its own token (protocols.md section 5)', async () => {
    const identity = await adapter.verify(ctx);
    assert.deepEqual(identity, {
      platformAccountId: fb.page.id, username: 'heraldtestpage', displayName: 'Herald Test Page',
      profileUrl: 'https://www.facebook.com/heraldtestpage', kind: 'page', settings: { pageId: fb.page.id },
    });
    const [call] = fb.standIn.calls('GET');
    assert.equal(call.path, '/v25.0/me');
    assert.deepEqual(call.query, { fields: 'id,name,username,link', access_token: fb.page.token });
  });

  it('refuses a connection whose token Graph rejects, asking to reconnect', async () => {
    ctx.credentials.access_token = 'wrong';
    await assert.rejects(adapter.verify(ctx), (err) => {
      assert.deepEqual(failureOf(err), {
        name: 'PlatformFailure', platform: 'facebook', kind: 'reauthorize', retryAfterSeconds: undefined,
        message: 'Facebook refused the connection: Facebook no longer accepts this connection; reconnect the account.',
      });
      return true;
    });
  });

  it('publishes a text post with a link and returns the <pageId>_<postId> URL', async () => {
    const published = await adapter.publish(ctx, { postId: 'p1', text: 'Hello Pages', media: [], configuration: { link: 'https://example.com/a' } });
    const [post] = [...fb.posts.values()];
    assert.deepEqual(published, { platformPostId: post.id, url: `https://www.facebook.com/${post.id}` });
    assert.match(post.id, new RegExp(`^${fb.page.id}_\\d+$`));
    const [call] = fb.standIn.calls('POST', `/v25.0/${fb.page.id}/feed`);
    assert.deepEqual(call.form, { message: 'Hello Pages', link: 'https://example.com/a', access_token: fb.page.token });
  });

  it('publishes several photos with alt text as unpublished uploads attached to one feed post', async () => {
    const published = await adapter.publish(ctx, {
      postId: 'p2', text: 'Two photos', media: [png('A red door', 'https://cdn.example/1.png'), png(undefined, 'https://cdn.example/2.png')],
    });
    const uploads = fb.standIn.calls('POST', `/v25.0/${fb.page.id}/photos`);
    assert.deepEqual(uploads.map((u) => u.form), [
      { published: 'false', url: 'https://cdn.example/1.png', alt_text_custom: 'A red door', access_token: fb.page.token },
      { published: 'false', url: 'https://cdn.example/2.png', access_token: fb.page.token },
    ]);
    const photoIds = [...fb.photos.keys()];
    const [feed] = fb.standIn.calls('POST', `/v25.0/${fb.page.id}/feed`);
    assert.deepEqual(feed.form, {
      message: 'Two photos', 'attached_media[0]': JSON.stringify({ media_fbid: photoIds[0] }), 'attached_media[1]': JSON.stringify({ media_fbid: photoIds[1] }),
      access_token: fb.page.token,
    });
    const post = fb.posts.get(published.platformPostId)!;
    assert.deepEqual(post.photoIds, photoIds);
    assert.deepEqual([...fb.photos.values()].map((p) => [p.alt, p.usedBy]), [['A red door', post.id], [undefined, post.id]]);
  });

  it('sends the bytes as multipart source when the photo has no public URL', async () => {
    await adapter.publish(ctx, { postId: 'p3', text: 'Bytes', media: [png('alt')] });
    const [upload] = fb.standIn.calls('POST', `/v25.0/${fb.page.id}/photos`);
    assert.deepEqual(upload.multipart!.map((p) => [p.name, p.value ?? p.file!.data.toString()]), [
      ['published', 'false'], ['alt_text_custom', 'alt'], ['access_token', fb.page.token], ['source', 'png-bytes'],
    ]);
    assert.equal([...fb.photos.values()][0].sourceBytes, 9);
  });

  it('publishes a Page photo story from an unpublished photo', async () => {
    const published = await adapter.publish(ctx, { postId: 'p4', text: '', media: [png(undefined, 'https://cdn.example/s.png')], configuration: { placement: 'story' } });
    const [story] = [...fb.posts.values()];
    assert.equal(story.kind, 'story');
    assert.deepEqual(published, { platformPostId: story.id.split('_')[1], url: `https://www.facebook.com/${story.id}` });
    const [call] = fb.standIn.calls('POST', `/v25.0/${fb.page.id}/photo_stories`);
    assert.deepEqual(call.form, { photo_id: story.photoIds[0], access_token: fb.page.token });
  });

  it('publishes a first comment under its own post as the Page', async () => {
    const post = await adapter.publish(ctx, { postId: 'p5', text: 'Main', media: [] });
    const comment = await adapter.publish(ctx, { postId: 'p6', text: 'First!', media: [], replyTo: { platformPostId: post.platformPostId } });
    const stored = fb.comments.get(comment.platformPostId)!;
    assert.deepEqual([stored.postId, stored.parentId, stored.message, stored.from.id], [post.platformPostId, null, 'First!', fb.page.id]);
    assert.equal(comment.url, `${post.url}?comment_id=${comment.platformPostId.split('_')[1]}`);
  });

  it('does not duplicate a first comment whose answer was lost', async () => {
    const post = await adapter.publish(ctx, { postId: 'p5b', text: 'Main', media: [] });
    fb.standIn.inject({ method: 'POST', path: `/v25.0/${post.platformPostId}/comments` }, { kind: 'hang', thenHandle: true });
    const comment = await adapter.publish(ctx, { postId: 'p6b', text: 'Only once', media: [], replyTo: { platformPostId: post.platformPostId } });
    assert.equal(fb.comments.size, 1);
    assert.equal(comment.platformPostId, [...fb.comments.keys()][0]);
  });

  it('deletes a feed post, and an already-deleted one counts as gone', async () => {
    const post = await adapter.publish(ctx, { postId: 'p7', text: 'Short-lived', media: [] });
    await adapter.delete(ctx, post.platformPostId);
    assert.equal(fb.posts.size, 0);
    await adapter.delete(ctx, post.platformPostId);
    assert.deepEqual(fb.standIn.calls('DELETE').map((c) => c.path), [`/v25.0/${post.platformPostId}`, `/v25.0/${post.platformPostId}`]);
  });

  it('a transient answer (500, code 2) to a create is an unknown outcome that is looked up, never a plain retry', async () => {
    fb.standIn.inject({ method: 'POST', path: `/v25.0/${fb.page.id}/feed` }, { kind: 'reply', response: graphErrors.transient() });
    await assert.rejects(adapter.publish(ctx, { postId: 'p5xx', text: 'Maybe made', media: [] }), (err) => {
      assert.deepEqual(failureOf(err), { name: 'PlatformFailure', platform: 'facebook', kind: 'unknown_outcome', message: 'Facebook answered with a temporary error; it may have published the post.', retryAfterSeconds: undefined });
      return true;
    });
    assert.equal(fb.standIn.calls('GET', `/v25.0/${fb.page.id}/published_posts`).length, 1, 'looked up');
  });

  it('a delete answered 100/33 for a post still there is a refusal, not gone: only a read that cannot find it confirms', async () => {
    const post = await adapter.publish(ctx, { postId: 'p7b', text: 'Still here', media: [] });
    // 100/33 also means "cannot be loaded due to missing permissions, or does not support this operation".
    fb.standIn.inject({ method: 'DELETE' }, { kind: 'reply', response: graphErrors.unknownObject(post.platformPostId, 'delete') });
    await assert.rejects(adapter.delete(ctx, post.platformPostId), (err) => {
      assert.deepEqual(failureOf(err), { name: 'PlatformFailure', platform: 'facebook', kind: 'permanent', message: 'Facebook refused to delete the post: Facebook did not allow this connection to delete it; nothing was changed.', retryAfterSeconds: undefined });
      return true;
    });
    assert.equal(fb.posts.has(post.platformPostId), true);
    assert.deepEqual(fb.standIn.calls('GET', `/v25.0/${post.platformPostId}`).map((c) => c.query.fields), ['id']);
  });

  it('resolves the URL from the id', async () => {
    assert.equal(await adapter.resolveUrl!(ctx, `${fb.page.id}_42`), `https://www.facebook.com/${fb.page.id}_42`);
  });

  it('does not duplicate a feed post whose answer was lost: it finds the post it made', async () => {
    fb.standIn.inject({ method: 'POST', path: `/v25.0/${fb.page.id}/feed` }, { kind: 'hang', thenHandle: true });
    const published = await adapter.publish(ctx, { postId: 'p8', text: 'Exactly once', media: [] });
    assert.equal(fb.posts.size, 1);
    const [post] = [...fb.posts.values()];
    assert.deepEqual(published, { platformPostId: post.id, url: `https://www.facebook.com/${post.id}` });
    assert.equal(fb.standIn.calls('POST', `/v25.0/${fb.page.id}/feed`).length, 1);
    assert.equal(await adapter.findPublished!(ctx, { postId: 'p8', text: 'Exactly once', media: [] }).then((p) => p?.platformPostId), post.id);
  });

  it('finds no text-less post by lookup: anything in the window would match, so the outcome stays unknown', async () => {
    // Posted by hand, as far as Herald can tell: nothing ties it to the attempt being settled.
    await adapter.publish(ctx, { postId: 'hand', text: '', media: [png(undefined, 'https://cdn.example/h.png')] });
    await assert.rejects(adapter.findPublished!(ctx, { postId: 'p8e', text: '', media: [png(undefined, 'https://cdn.example/e.png')] }), (err) => {
      assert.deepEqual(failureOf(err), {
        name: 'PlatformFailure', platform: 'facebook', kind: 'unknown_outcome', retryAfterSeconds: undefined,
        message: 'Facebook did not answer in time; the post may have been published.',
      });
      return true;
    });
  });

  it('reports an unknown outcome when the lost create left nothing to find', async () => {
    fb.standIn.inject({ method: 'POST', path: `/v25.0/${fb.page.id}/feed` }, { kind: 'reset' });
    await assert.rejects(adapter.publish(ctx, { postId: 'p9', text: 'Maybe', media: [] }), (err) => {
      assert.deepEqual(failureOf(err), {
        name: 'PlatformFailure', platform: 'facebook', kind: 'unknown_outcome', retryAfterSeconds: undefined,
        message: 'Facebook did not answer in time; it may have published the post.',
      });
      return true;
    });
    assert.equal(fb.posts.size, 0);
    assert.equal(await adapter.findPublished!(ctx, { postId: 'p9', text: 'Maybe', media: [] }), null);
  });

  it('lists comments newest first with cursor paging, parents and ownership', async () => {
    const post = await adapter.publish(ctx, { postId: 'p10', text: 'Discuss', media: [] });
    const first = fb.addExternalComment(post.platformPostId, 'comment 0');
    for (let i = 1; i < 28; i++) fb.addExternalComment(post.platformPostId, `comment ${i}`);
    const reply = await adapter.replyToComment!(ctx, post.platformPostId, first.id, 'Thanks!');
    const page1 = await adapter.listComments!(ctx, post.platformPostId);
    assert.equal(page1.comments.length, 25);
    assert.deepEqual(page1.comments[0], {
      platformCommentId: reply.platformPostId, platformParentId: first.id,
      author: { handle: 'Herald Test Page', displayName: 'Herald Test Page', platformId: fb.page.id, avatarUrl: null },
      text: 'Thanks!', createdAt: new Date(fb.comments.get(reply.platformPostId)!.created_time).toISOString(), likes: 0, replies: 0, own: true,
    });
    assert.ok(page1.nextCursor);
    const page2 = await adapter.listComments!(ctx, post.platformPostId, page1.nextCursor!);
    assert.equal(page2.nextCursor, null);
    assert.deepEqual(page2.comments.map((c) => c.text), ['comment 3', 'comment 2', 'comment 1', 'comment 0']);
    assert.deepEqual(page2.comments[3].author, { handle: 'Ada Visitor', displayName: 'Ada Visitor', platformId: '900000000000001', avatarUrl: null });
    assert.equal(page2.comments[3].replies, 1);
    assert.equal(page2.comments[3].own, false);
    const [call] = fb.standIn.calls('GET', `/v25.0/${post.platformPostId}/comments`);
    assert.deepEqual(call.query, {
      fields: 'id,message,from{id,name},created_time,like_count,comment_count,parent{id},is_hidden', filter: 'stream',
      order: 'reverse_chronological', limit: '25', access_token: fb.page.token,
    });
  });

  it('replies to, hides, unhides and deletes any comment', async () => {
    const post = await adapter.publish(ctx, { postId: 'p11', text: 'Moderate me', media: [] });
    const visitor = fb.addExternalComment(post.platformPostId, 'rude words');
    const reply = await adapter.replyToComment!(ctx, post.platformPostId, visitor.id, 'Please be kind');
    assert.equal(reply.url, `https://www.facebook.com/${post.platformPostId}?comment_id=${reply.platformPostId.split('_')[1]}`);
    assert.deepEqual(fb.standIn.calls('POST', `/v25.0/${visitor.id}/comments`)[0].form, { message: 'Please be kind', access_token: fb.page.token });
    await adapter.hideComment!(ctx, visitor.id, true);
    assert.equal(fb.comments.get(visitor.id)!.is_hidden, true);
    assert.deepEqual(fb.standIn.calls('POST', `/v25.0/${visitor.id}`)[0].form, { is_hidden: 'true', access_token: fb.page.token });
    await adapter.hideComment!(ctx, visitor.id, false);
    assert.equal(fb.comments.get(visitor.id)!.is_hidden, false);
    await adapter.deleteComment!(ctx, visitor.id);
    assert.equal(fb.comments.has(visitor.id), false);
    assert.equal(fb.comments.has(reply.platformPostId), false);
    await adapter.deleteComment!(ctx, visitor.id);
  });

  describe('classifies every Graph answer to a create once, by code', () => {
    const refusal = 'Facebook refused the post: ';
    const rows: Array<[string, () => ReturnType<typeof graphError>, string, string, number | undefined]> = [
      ['code 1 (transient)', () => graphError({ status: 500, code: 1, message: 'An unknown error occurred' }), 'unknown_outcome', 'Facebook answered with a temporary error; it may have published the post.', undefined],
      ['code 2 (transient)', graphErrors.transient, 'unknown_outcome', 'Facebook answered with a temporary error; it may have published the post.', undefined],
      ['code 4 with the BUC wait', () => graphErrors.throttled(4, 12), 'rate_limited', 'Facebook is rate limiting this account.', 720],
      ['code 17 with the BUC wait', () => graphErrors.throttled(17, 1), 'rate_limited', 'Facebook is rate limiting this account.', 60],
      ['code 32 with the BUC wait', () => graphErrors.throttled(32, 5), 'rate_limited', 'Facebook is rate limiting this account.', 300],
      ['code 613 without an estimate', () => graphErrors.throttled(613), 'rate_limited', 'Facebook is rate limiting this account.', undefined],
      ['code 80001 with the BUC wait', () => graphErrors.throttled(80001, 30), 'rate_limited', 'Facebook is rate limiting this account.', 1800],
      ['code 80002 with the BUC wait', () => graphErrors.throttled(80002, 2), 'rate_limited', 'Facebook is rate limiting this account.', 120],
      ['code 9 subcode 2207042 (publishing limit)', () => graphError({ status: 400, code: 9, subcode: 2207042, message: 'The maximum number of posts allowed to be published has been reached' }), 'rate_limited', 'Facebook allows no more API-published posts for this account in the last 24 hours.', undefined],
      ['code 10 (permission)', () => graphErrors.permission(10), 'reauthorize', 'Facebook has not granted Herald the permission this needs; reconnect the account.', undefined],
      ['code 200 (permission)', () => graphErrors.permission(200), 'reauthorize', 'Facebook has not granted Herald the permission this needs; reconnect the account.', undefined],
      ['code 299 (permission)', () => graphErrors.permission(299), 'reauthorize', 'Facebook has not granted Herald the permission this needs; reconnect the account.', undefined],
      ['code 190 (token)', graphErrors.expiredToken, 'reauthorize', 'Facebook no longer accepts this connection; reconnect the account.', undefined],
      ['code 100 subcode 33 (no such object)', () => graphErrors.unknownObject('1'), 'gone', 'Facebook has no such object, or it was already removed.', undefined],
      ['code 100 (parameter)', () => graphErrors.invalidParameter(), 'permanent', 'Facebook did not accept a parameter of the request.', undefined],
      ['code 368 (policy)', () => graphError({ code: 368, message: 'The action attempted has been deemed abusive' }), 'permanent', 'Facebook blocked it under its content policies.', undefined],
      ['code 506 (duplicate)', () => graphError({ code: 506, message: 'Duplicate status message' }), 'permanent', 'it duplicates a recent post.', undefined],
      ['code 1609005 (link)', () => graphError({ code: 1609005, message: 'Error Posting Link' }), 'permanent', 'Facebook could not read the link.', undefined],
      ['code 9004 (media fetch)', () => graphError({ code: 9004, message: 'Only photo or video can be accepted as media type.' }), 'permanent', 'Facebook could not download the media from its URL.', undefined],
      ['code 9007 (media not ready)', () => graphError({ code: 9007, message: 'Media ID is not available' }), 'retryable', 'Facebook had not finished processing the media.', undefined],
      ['code 36003 (aspect ratio)', () => graphError({ code: 36003, message: 'The aspect ratio is not supported.' }), 'permanent', 'the media aspect ratio is not one Facebook accepts.', undefined],
      ['an unknown code', () => graphError({ code: 12345, message: 'Something new' }), 'permanent', 'Facebook did not accept the request.', undefined],
      ['HTTP 429 without an envelope', () => ({ status: 429, text: 'slow down' }), 'rate_limited', 'Facebook is rate limiting this account.', undefined],
      ['HTTP 401 without an envelope', () => ({ status: 401, text: 'no' }), 'reauthorize', 'Facebook no longer accepts this connection; reconnect the account.', undefined],
      ['HTTP 403 without an envelope', () => ({ status: 403, text: 'no' }), 'reauthorize', 'Facebook has not granted Herald the permission this needs; reconnect the account.', undefined],
      ['HTTP 404 without an envelope', () => ({ status: 404, text: 'no' }), 'gone', 'Facebook has no such object, or it was already removed.', undefined],
      ['HTTP 502 HTML page', () => ({ status: 502, text: '<html>Bad gateway</html>' }), 'unknown_outcome', 'Facebook answered with a temporary error; it may have published the post.', undefined],
      ['HTTP 400 without an envelope', () => ({ status: 400, text: 'bad' }), 'permanent', 'Facebook did not accept the request.', undefined],
    ];
    for (const [name, reply, kind, reason, wait] of rows) {
      it(name, async () => {
        fb.standIn.inject({ method: 'POST', path: `/v25.0/${fb.page.id}/feed` }, { kind: 'reply', response: reply() });
        await assert.rejects(adapter.publish(ctx, { postId: 'e', text: 'x', media: [] }), (err) => {
          // A transient answer to a create may have made the post (an unknown outcome, not a refusal).
          assert.deepEqual(failureOf(err), { name: 'PlatformFailure', platform: 'facebook', kind, message: kind === 'unknown_outcome' ? reason : refusal + reason, retryAfterSeconds: wait });
          assert.equal((err as { detail: { status: number } }).detail.status, reply().status ?? 400);
          return true;
        });
        assert.equal(fb.posts.size, 0);
      });
    }

    it('reads the longest wait any usage header names (Page usage and business-use-case usage)', async () => {
      const reply = graphErrors.throttled(32, 5);
      reply.headers!['x-page-usage'] = JSON.stringify({ call_count: 100, total_cputime: 4, total_time: 9, estimated_time_to_regain_access: 20 });
      fb.standIn.inject({ method: 'POST', path: `/v25.0/${fb.page.id}/feed` }, { kind: 'reply', response: reply });
      await assert.rejects(adapter.publish(ctx, { postId: 'w', text: 'x', media: [] }), { kind: 'rate_limited', retryAfterSeconds: 1200 });
      fb.standIn.inject({ method: 'POST', path: `/v25.0/${fb.page.id}/feed` }, { kind: 'reply', response: { ...graphErrors.throttled(17), headers: { 'x-business-use-case-usage': 'not json' } } });
      await assert.rejects(adapter.publish(ctx, { postId: 'w', text: 'x', media: [] }), { kind: 'rate_limited', retryAfterSeconds: undefined });
    });

    it('names the operation in the message (delete, comments)', async () => {
      fb.standIn.inject({ method: 'DELETE' }, { kind: 'reply', response: graphErrors.permission() });
      await assert.rejects(adapter.delete(ctx, `${fb.page.id}_1`), { clientMessage: 'Facebook refused to delete the post: Facebook has not granted Herald the permission this needs; reconnect the account.' });
      fb.standIn.inject({ method: 'GET' }, { kind: 'reply', response: graphErrors.throttled(32, 3) });
      await assert.rejects(adapter.listComments!(ctx, `${fb.page.id}_1`), { kind: 'rate_limited', retryAfterSeconds: 180, clientMessage: 'Facebook refused to list the comments: Facebook is rate limiting this account.' });
    });

    it('treats an unreachable Graph as retryable, and never sends raw bodies to clients', async () => {
      await fb.stop();
      await assert.rejects(adapter.publish(ctx, { postId: 'x', text: 'x', media: [] }), { kind: 'retryable', clientMessage: 'Facebook could not be reached; nothing was changed.' });
    });
  });
});
