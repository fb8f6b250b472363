import assert from 'node:assert/strict';
import { createHttpClient, type HttpClient } from '../../src/net/http';
import { commentCapabilitiesFor } from '../../src/platforms/comment-capabilities';
import { createLinkedInAdapter } from '../../src/platforms/linkedin';
import type { MediaItem, PlatformAdapter, PlatformContext, PlatformFailure } from '../../src/platforms/types';
import { failureOf } from '../standins/graph';
import { linkedInError, startLinkedInStandIn } from '../standins/linkedin';

describe('linkedin adapter against the REST stand-in', () => {
  let li: Awaited<ReturnType<typeof startLinkedInStandIn>>;
  let http: HttpClient;
  let adapter: PlatformAdapter;
  let member: PlatformContext;
  let page: PlatformContext;
  const fixedNow = new Date('2026-11-21T21:00:00.000Z');
  const png = (alt?: string): MediaItem => ({ data: Buffer.from(`png-${alt ?? 'none'}`), mimeType: 'image/png', kind: 'image', alt });
  const failure = (kind: string, message: string, retryAfterSeconds?: number) => (err: unknown) => {
    assert.deepEqual(failureOf(err), { name: 'PlatformFailure', platform: 'linkedin', kind, message, retryAfterSeconds });
    return true;
  };

  beforeEach(async () => {
    li = await startLinkedInStandIn();
    li.setClock(() => fixedNow);
    http = createHttpClient({ allowInsecure: true, timeoutMs: 1000 });
    adapter = createLinkedInAdapter({ http, origin: li.origin, now: () => fixedNow });
    member = { credentials: { access_token: li.member.token }, settings: { authorUrn: li.personUrn() } };
    page = { credentials: { access_token: li.member.token, organization_id: String(li.organization.id) }, settings: {} };
  });
  afterEach(async () => {
    await http.close();
    await li.stop();
  });

  it('verifies a member profile through userinfo, sending the version headers', async () => {
    assert.deepEqual(await adapter.verify({ credentials: { access_token: li.member.token }, settings: {} }), {
      platformAccountId: 'urn:li:person:m8Xy2bQ', username: 'Ada Lovelace', displayName: 'Ada Lovelace', profileUrl: null, kind: 'profile', settings: { authorUrn: 'urn:li:person:m8Xy2bQ' },
    });
    const [call] = li.standIn.calls('GET', '/v2/userinfo');
    assert.deepEqual([call.headers.authorization, call.headers['linkedin-version'], call.headers['x-restli-protocol-version']], [`Bearer ${li.member.token}`, '202605', '2.0.0']);
  });

  it('verifies an organization Page the member may post for', async () => {
    assert.deepEqual(await adapter.verify(page), {
      platformAccountId: 'urn:li:organization:2414183', username: 'herald-inc', displayName: 'Herald Inc', profileUrl: 'https://www.linkedin.com/company/herald-inc/',
      kind: 'page', settings: { authorUrn: 'urn:li:organization:2414183', organizationId: '2414183' },
    });
    assert.deepEqual(li.standIn.calls('GET', '/rest/organizationAcls')[0].query, { q: 'roleAssignee', state: 'APPROVED', count: '100' });
    li.organization.role = 'ANALYST';
    await assert.rejects(adapter.verify(page), failure('permanent', 'LinkedIn refused the connection: this member cannot post for organization 2414183; a Page administrator must connect it.'));
  });

  it('publishes text with little-text escaping and returns the feed/update URL', async () => {
    const published = await adapter.publish(member, { postId: 'p1', text: 'Launch (beta) #herald @team [v1] under_score', media: [] });
    const [post] = [...li.posts.values()];
    assert.deepEqual(published, { platformPostId: post.urn, url: `https://www.linkedin.com/feed/update/${post.urn}/` });
    assert.deepEqual(li.standIn.calls('POST', '/rest/posts')[0].json, {
      author: 'urn:li:person:m8Xy2bQ', commentary: 'Launch \\(beta\\) #herald \\@team \\[v1\\] under\\_score', visibility: 'PUBLIC',
      distribution: { feedDistribution: 'MAIN_FEED', targetEntities: [], thirdPartyDistributionChannels: [] }, lifecycleState: 'PUBLISHED', isReshareDisabledByAuthor: false,
    });
  });

  it('uploads images through initializeUpload and the returned uploadUrl, then posts them with alt text', async () => {
    const published = await adapter.publish(page, { postId: 'p2', text: 'Gallery', media: [png('first'), png()] });
    const inits = li.standIn.calls('POST', '/rest/images');
    assert.deepEqual(inits.map((c) => [c.query, c.json]), [
      [{ action: 'initializeUpload' }, { initializeUploadRequest: { owner: 'urn:li:organization:2414183' } }],
      [{ action: 'initializeUpload' }, { initializeUploadRequest: { owner: 'urn:li:organization:2414183' } }],
    ]);
    const puts = li.standIn.calls('PUT');
    const uploaded = [...li.images.values()];
    assert.deepEqual(puts.map((c) => [c.path, c.body.toString(), c.headers.authorization, c.headers['content-type']]), [
      [`/dms-uploads/${uploaded[0].uploadToken}/uploadedImage/0`, 'png-first', `Bearer ${li.member.token}`, 'image/png'],
      [`/dms-uploads/${uploaded[1].uploadToken}/uploadedImage/0`, 'png-none', `Bearer ${li.member.token}`, 'image/png'],
    ]);
    assert.deepEqual(li.posts.get(published.platformPostId)!.content, { multiImage: { images: [{ id: uploaded[0].urn, altText: 'first' }, { id: uploaded[1].urn }] } });
  });

  it('posts a single image as content.media', async () => {
    const published = await adapter.publish(member, { postId: 'p3', text: 'One', media: [png('only')] });
    assert.deepEqual(li.posts.get(published.platformPostId)!.content, { media: { id: [...li.images.keys()][0], altText: 'only' } });
  });

  it('deletes idempotently (204 again, 404 counts as gone)', async () => {
    const published = await adapter.publish(member, { postId: 'p4', text: 'Bye', media: [] });
    await adapter.delete(member, published.platformPostId);
    assert.equal(li.posts.size, 0);
    await adapter.delete(member, published.platformPostId);
    li.standIn.inject({ method: 'DELETE' }, { kind: 'reply', response: linkedInError(404, 'Not Found') });
    await adapter.delete(member, published.platformPostId);
    const calls = li.standIn.calls('DELETE');
    assert.deepEqual([calls[0].path, calls[0].headers['x-restli-method']], [`/rest/posts/${encodeURIComponent(published.platformPostId)}`, 'DELETE']);
    assert.equal(await adapter.resolveUrl!(member, published.platformPostId), `https://www.linkedin.com/feed/update/${published.platformPostId}/`);
  });

  it('does not duplicate a Page post whose create answer was lost: it finds it by author', async () => {
    li.standIn.inject({ method: 'POST', path: '/rest/posts' }, { kind: 'hang', thenHandle: true });
    const published = await adapter.publish(page, { postId: 'p5', text: 'Once (only)', media: [] });
    assert.equal(li.posts.size, 1);
    assert.deepEqual(published, { platformPostId: [...li.posts.keys()][0], url: `https://www.linkedin.com/feed/update/${[...li.posts.keys()][0]}/` });
    assert.deepEqual(li.standIn.calls('GET', '/rest/posts')[0].query, { q: 'author', author: 'urn:li:organization:2414183', count: '10', sortBy: 'LAST_MODIFIED' });
    assert.equal(li.standIn.calls('POST', '/rest/posts').length, 1);
  });

  it('a server error to a create may have taken effect: the attempt stays open and the retry finds the post', async () => {
    li.standIn.inject({ method: 'POST', path: '/rest/posts' }, { kind: 'reply', thenHandle: true, response: linkedInError(503, 'Service Unavailable') });
    const request = { postId: 'p503', text: 'Made before the 503', media: [] };
    await assert.rejects(adapter.publish(page, request), (err: PlatformFailure) => err.kind === 'retryable' && err.mayHaveTakenEffect === true);
    assert.equal(li.posts.size, 1);
    const found = await adapter.findPublished!(page, request);
    assert.equal(found?.platformPostId, [...li.posts.keys()][0]);
    li.standIn.inject({ method: 'POST', path: '/rest/images' }, { kind: 'reply', response: linkedInError(503, 'Service Unavailable') });
    await assert.rejects(adapter.publish(page, { postId: 'img503', text: 'an image', media: [png()] }), (err: PlatformFailure) => err.kind === 'retryable' && !err.mayHaveTakenEffect);
  });

  it('reports an unknown outcome when the lost create left nothing to find', async () => {
    li.standIn.inject({ method: 'POST', path: '/rest/posts' }, { kind: 'reset' });
    await assert.rejects(adapter.publish(page, { postId: 'p6', text: 'Maybe', media: [] }), failure('unknown_outcome', 'LinkedIn did not answer in time; it may have published the post.'));
    assert.equal(li.posts.size, 0);
    assert.equal(await adapter.findPublished!(page, { postId: 'p6', text: 'Maybe', media: [] }), null);
  });

  it("a member's lost create stays unknown, never a lost connection: the author finder needs r_member_social", async () => {
    const gated = await http.request({ method: 'GET', url: `${li.origin}/rest/posts?q=author&author=${encodeURIComponent(li.personUrn())}`, headers: { authorization: `Bearer ${li.member.token}`, 'linkedin-version': '202605' } });
    assert.equal(gated.status, 403, 'the stand-in refuses the member-author finder, as LinkedIn does without r_member_social');
    li.standIn.inject({ method: 'POST', path: '/rest/posts' }, { kind: 'hang', thenHandle: true });
    await assert.rejects(adapter.publish(member, { postId: 'p6m', text: 'Maybe mine', media: [] }), failure('unknown_outcome', 'LinkedIn did not answer in time; it may have published the post.'));
    await assert.rejects(adapter.findPublished!(member, { postId: 'p6m', text: 'Maybe mine', media: [] }),
      failure('unknown_outcome', 'LinkedIn did not answer in time; the post may have been published.'));
    assert.equal(li.posts.size, 1);
    // A Page whose lookup is refused (a role lost meanwhile) is unconfirmed too, not "reconnect".
    li.standIn.inject({ method: 'POST', path: '/rest/posts' }, { kind: 'hang', thenHandle: true });
    li.standIn.inject({ method: 'GET', path: '/rest/posts' }, { kind: 'reply', response: linkedInError(403, 'Not enough permissions', 'ACCESS_DENIED', 100) }, 2);
    await assert.rejects(adapter.publish(page, { postId: 'p6p', text: 'Maybe the Page', media: [] }), failure('unknown_outcome', 'LinkedIn did not answer in time; it may have published the post.'));
    await assert.rejects(adapter.findPublished!(page, { postId: 'p6p', text: 'Maybe the Page', media: [] }),
      failure('unknown_outcome', 'LinkedIn did not answer in time; the post may have been published.'));
  });

  it('reads Page comments with start/count paging and their replies', async () => {
    const post = await adapter.publish(page, { postId: 'p7', text: 'Comments welcome', media: [] });
    const first = li.addExternalComment(post.platformPostId, 'comment 0');
    for (let i = 1; i < 27; i++) li.addExternalComment(post.platformPostId, `comment ${i}`);
    li.addExternalComment(post.platformPostId, 'a reply', first.commentUrn);
    const own = await adapter.replyToComment!(page, post.platformPostId, first.commentUrn, 'Thanks!');
    const page1 = await adapter.listComments!(page, post.platformPostId);
    assert.equal(page1.nextCursor, '25:27');
    assert.deepEqual(page1.comments.slice(0, 3).map((c) => [c.text, c.platformParentId, c.replies, c.own]), [
      ['comment 0', null, 2, false], ['a reply', first.commentUrn, 0, false], ['Thanks!', first.commentUrn, 0, true],
    ]);
    assert.deepEqual(page1.comments[2], {
      platformCommentId: own.platformPostId, platformParentId: first.commentUrn, author: { handle: '2414183', displayName: '', platformId: 'urn:li:organization:2414183', avatarUrl: null },
      text: 'Thanks!', createdAt: fixedNow.toISOString(), likes: 0, replies: 0, own: true,
    });
    assert.equal(page1.comments.length, 27);
    assert.deepEqual(li.standIn.calls('GET', `/rest/socialActions/${encodeURIComponent(post.platformPostId)}/comments`)[0].query, { start: '0', count: '25' });
    const page2 = await adapter.listComments!(page, post.platformPostId, page1.nextCursor!);
    assert.deepEqual([page2.comments.map((c) => c.text), page2.nextCursor], [['comment 25', 'comment 26'], null]);
  });

  it('a comment deleted between page reads shifts the offsets: the next page is refused (retryable), so no live comment is inferred deleted', async () => {
    const post = await adapter.publish(page, { postId: 'p7s', text: 'Comments shifting', media: [] });
    const all = Array.from({ length: 27 }, (_, i) => li.addExternalComment(post.platformPostId, `shifting ${i}`));
    const page1 = await adapter.listComments!(page, post.platformPostId);
    assert.equal(page1.comments.length, 25);
    li.comments.delete(all[0].id);
    await assert.rejects(
      adapter.listComments!(page, post.platformPostId, page1.nextCursor!),
      failure('retryable', "LinkedIn's comments on this post changed between pages; they are read again from the start at the next refresh."),
    );
  });

  it('replies to a comment with parentComment and deletes its own comment: the URN names the activity, the delete path the post', async () => {
    const post = await adapter.publish(page, { postId: 'p8', text: 'Reply here', media: [] });
    const activity = li.posts.get(post.platformPostId)!.activity;
    const visitor = li.addExternalComment(post.platformPostId, 'question?');
    const reply = await adapter.replyToComment!(page, post.platformPostId, visitor.commentUrn, 'answer');
    assert.deepEqual(li.standIn.calls('POST', `/rest/socialActions/${encodeURIComponent(post.platformPostId)}/comments`)[0].json, {
      actor: 'urn:li:organization:2414183', object: post.platformPostId, message: { text: 'answer' }, parentComment: visitor.commentUrn,
    });
    const id = [...li.comments.values()].find((c) => c.text === 'answer')!.id;
    assert.equal(reply.platformPostId, `urn:li:comment:(${activity},${id})`, 'the URN LinkedIn gives the comment, not one built from the share URN');
    assert.equal(reply.url, `https://www.linkedin.com/feed/update/${post.platformPostId}/?commentUrn=${encodeURIComponent(reply.platformPostId)}`);
    await adapter.deleteComment!(page, reply.platformPostId, post.platformPostId);
    const [del] = li.standIn.calls('DELETE');
    assert.equal(del.path, `/rest/socialActions/${encodeURIComponent(post.platformPostId)}/comments/${id}`);
    assert.deepEqual(del.query, { actor: 'urn:li:organization:2414183' });
    assert.equal(li.comments.size, 1, 'the reply is gone from LinkedIn, not taken for gone by a 404');
    await adapter.deleteComment!(page, reply.platformPostId, post.platformPostId);
  });

  it("gives its own comment the id the listing gives it, also when the create's answer has no body (read back by id)", async () => {
    const post = await adapter.publish(page, { postId: 'p9', text: 'First comment below', media: [] });
    li.commentCreateAnswer.entity = false;
    const first = await adapter.publish(page, { postId: 'p9c', text: 'the first comment', media: [], replyTo: { platformPostId: post.platformPostId } });
    const [create] = li.standIn.calls('POST', /\/comments$/);
    const id = [...li.comments.values()].find((c) => c.text === 'the first comment')!.id;
    assert.equal(create.path, `/rest/socialActions/${encodeURIComponent(post.platformPostId)}/comments`);
    assert.deepEqual(li.standIn.calls('GET', `/rest/socialActions/${encodeURIComponent(post.platformPostId)}/comments/${id}`).length, 1);
    const listed = await adapter.listComments!(page, post.platformPostId);
    assert.deepEqual(listed.comments.map((c) => [c.platformCommentId, c.own]), [[first.platformPostId, true]]);
    assert.match(first.platformPostId, /^urn:li:comment:\(urn:li:activity:\d+,\d+\)$/);
    // The read back failing does not fail a comment that was made: it keeps the id built from the post, as before.
    li.standIn.inject({ method: 'GET', path: /\/comments\/\d+$/ }, { kind: 'reply', response: linkedInError(500, 'Internal Server Error') });
    const second = await adapter.publish(page, { postId: 'p9d', text: 'another', media: [], replyTo: { platformPostId: post.platformPostId } });
    assert.match(second.platformPostId, new RegExp(`^urn:li:comment:\\(${post.platformPostId},\\d+\\)$`));
  });

  it('refuses comment access on a member profile without calling LinkedIn', async () => {
    const before = li.standIn.requests.length;
    await assert.rejects(adapter.listComments!(member, 'urn:li:share:1'), failure('permanent', 'LinkedIn offers no comment access for member profile posts; only Page posts have comments in Herald.'));
    assert.equal(li.standIn.requests.length, before);
  });

  it('states the profile/Page comment difference as capability data', () => {
    const none = { list: false, reply: false, hide: false, deleteOwn: false, deleteAny: false };
    assert.deepEqual(commentCapabilitiesFor('linkedin', { kind: 'profile' }), none);
    assert.deepEqual(commentCapabilitiesFor('linkedin', { kind: 'page' }), { list: true, reply: true, hide: false, deleteOwn: true, deleteAny: false });
    assert.deepEqual(commentCapabilitiesFor('facebook', { kind: 'page' }), { list: true, reply: true, hide: true, deleteOwn: true, deleteAny: true });
  });

  describe('classifies every answer once, by status', () => {
    const rows: Array<[number, string, string, number | undefined]> = [
      [400, 'permanent', 'LinkedIn did not accept the request.', undefined],
      [401, 'reauthorize', 'LinkedIn no longer accepts this connection; reconnect the account.', undefined],
      [403, 'reauthorize', 'LinkedIn has not granted Herald the permission this needs; reconnect the account.', undefined],
      [404, 'gone', 'LinkedIn has no such post or comment.', undefined],
      [409, 'permanent', 'LinkedIn reported a conflicting change; nothing was changed.', undefined],
      [422, 'permanent', 'LinkedIn found the content invalid or a duplicate of a recent post.', undefined],
      [426, 'permanent', 'LinkedIn no longer accepts the API version Herald uses.', undefined],
      [429, 'rate_limited', 'LinkedIn\'s daily limit for this account or application is reached.', 3 * 3600],
      [500, 'retryable', 'LinkedIn had a temporary problem; nothing was changed.', undefined],
      [503, 'retryable', 'LinkedIn had a temporary problem; nothing was changed.', undefined],
      [418, 'permanent', 'LinkedIn did not accept the request.', undefined],
    ];
    for (const [status, kind, reason, wait] of rows) {
      it(`HTTP ${status}`, async () => {
        li.standIn.inject({ method: 'POST', path: '/rest/posts' }, { kind: 'reply', response: linkedInError(status, 'platform words', 'CODE', 65600) });
        await assert.rejects(adapter.publish(member, { postId: 'e', text: 'x', media: [] }), (err) => {
          failure(kind, `LinkedIn refused the post: ${reason}`, wait)(err);
          assert.equal((err as { detail: { status: number } }).detail.status, status);
          return true;
        });
        assert.equal(li.posts.size, 0);
      });
    }

    it('answers the real refusals: bad token, missing version, duplicate content', async () => {
      await assert.rejects(adapter.verify({ credentials: { access_token: 'nope' }, settings: {} }),
        failure('reauthorize', 'LinkedIn refused the connection: LinkedIn no longer accepts this connection; reconnect the account.'));
      const old = createLinkedInAdapter({ http, origin: li.origin, now: () => fixedNow, version: '2020' });
      await assert.rejects(old.publish(member, { postId: 'v', text: 'x', media: [] }), failure('permanent', 'LinkedIn refused the post: LinkedIn no longer accepts the API version Herald uses.'));
      await adapter.publish(member, { postId: 'd1', text: 'same words', media: [] });
      const [first] = [...li.posts.keys()];
      await assert.rejects(adapter.publish(member, { postId: 'd2', text: 'same words', media: [] }),
        failure('permanent', `LinkedIn refused the post: it repeats a recent post of this account (https://www.linkedin.com/feed/update/${first}/), and LinkedIn takes no duplicates; nothing was published.`));
    });
  });
});
