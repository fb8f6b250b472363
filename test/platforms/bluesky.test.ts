import assert from 'node:assert/strict';
import { createHttpClient, type HttpClient } from '../../src/net/http';
import { createBlueskyAdapter, checkServiceUrl, isAppPassword, rkeyForPost } from '../../src/platforms/bluesky';
import { XRPCError } from '@atproto/api';
import { TransportError } from '../../src/net/http';
import { classify } from '../../src/platforms/bluesky/errors';
import { isTid, rkeyForReply } from '../../src/platforms/bluesky/tid';
import { PlatformFailure, type PlatformAdapter, type PlatformContext } from '../../src/platforms/types';
import { startBlueskyStandIn, type BlueskyStandIn, type BlueskyStandInAccount } from '../standins/bluesky';

// 1x1 transparent PNG.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
const NOW = new Date('2026-11-21T12:00:00.000Z');
const APP_PASSWORD = 'abcd-efgh-ijkl-mnop';

function failure(kind: PlatformFailure['kind'], clientMessage: string, retryAfterSeconds?: number) {
  return (err: unknown) => {
    assert.ok(err instanceof PlatformFailure, `expected PlatformFailure, got ${String(err)}`);
    assert.deepEqual(
      { platform: err.platform, kind: err.kind, clientMessage: err.clientMessage, retryAfterSeconds: err.retryAfterSeconds },
      { platform: 'bluesky', kind, clientMessage, retryAfterSeconds },
    );
    return true;
  };
}

describe('bluesky: pure account checks', () => {
  it('isAppPassword accepts only four groups of four lowercase letters or digits', () => {
    for (const good of ['abcd-efgh-ijkl-mnop', '2x4z-0000-a1b2-zzzz']) assert.equal(isAppPassword(good), true, good);
    for (const bad of ['ABCD-efgh-ijkl-mnop', 'abcd-efgh-ijkl', 'abcdefghijklmnop', 'abcd-efgh-ijkl-mnop ', 'my real password', 'abc_-efgh-ijkl-mnop', 42, undefined]) {
      assert.equal(isAppPassword(bad), false, String(bad));
    }
  });

  it('checkServiceUrl keeps an https origin, defaults to bsky.social and refuses insecure addresses unless allowed', () => {
    assert.deepEqual(checkServiceUrl(undefined, false), { ok: true, serviceUrl: 'https://bsky.social' });
    assert.deepEqual(checkServiceUrl('  ', false), { ok: true, serviceUrl: 'https://bsky.social' });
    assert.deepEqual(checkServiceUrl('pds.example.com', false), { ok: true, serviceUrl: 'https://pds.example.com' });
    assert.deepEqual(checkServiceUrl('https://PDS.example.com:8443/', false), { ok: true, serviceUrl: 'https://pds.example.com:8443' });
    assert.deepEqual(checkServiceUrl('http://pds.example.com', false), { ok: false, message: 'service_url must use https.' });
    assert.deepEqual(checkServiceUrl('https://127.0.0.1:2583', false), { ok: false, message: 'service_url must be a public address.' });
    assert.deepEqual(checkServiceUrl('https://localhost', false), { ok: false, message: 'service_url must be a public address.' });
    assert.deepEqual(checkServiceUrl('https://[::1]', false), { ok: false, message: 'service_url must be a public address.' });
    assert.deepEqual(checkServiceUrl('https://10.1.2.3', false), { ok: false, message: 'service_url must be a public address.' });
    assert.deepEqual(checkServiceUrl('https://bsky.social/xrpc', false), {
      ok: false,
      message: 'service_url must be a server address only, with no path or query.',
    });
    assert.deepEqual(checkServiceUrl('https://u:p@bsky.social', false), { ok: false, message: 'service_url must not carry credentials.' });
    assert.deepEqual(checkServiceUrl('ftp://bsky.social', false), { ok: false, message: 'service_url must use https.' });
    assert.deepEqual(checkServiceUrl('http://127.0.0.1:2583', true), { ok: true, serviceUrl: 'http://127.0.0.1:2583' });
  });

  it('derives a valid, stable, distinct TID record key from the post id', () => {
    const a = rkeyForPost('6f1c9e34-5d0a-4c6e-9b8e-1f2a3b4c5d6e');
    assert.equal(a, rkeyForPost('6f1c9e34-5d0a-4c6e-9b8e-1f2a3b4c5d6e'));
    assert.equal(isTid(a), true);
    const keys = new Set(Array.from({ length: 2000 }, (_, i) => rkeyForPost(`post-${i}`)));
    assert.equal(keys.size, 2000);
    for (const key of keys) assert.equal(isTid(key), true, key);
  });
});

describe('bluesky: the classification table, row by row', () => {
  const rows: [number, string, string, PlatformFailure['kind'], string, number?][] = [
    [401, 'AuthenticationRequired', 'Invalid identifier or password', 'reauthorize', 'Bluesky refused the handle or app password; reconnect the account.'],
    [401, 'AuthMissing', 'Authentication Required', 'reauthorize', 'Bluesky asked for a login again; reconnect the account.'],
    [400, 'InvalidToken', 'Token could not be verified', 'reauthorize', 'Bluesky no longer accepts the session of this account; reconnect the account.'],
    [400, 'ExpiredToken', 'Token has expired', 'reauthorize', 'Bluesky no longer accepts the session of this account; reconnect the account.'],
    [400, 'AccountTakedown', 'Account has been taken down', 'reauthorize', 'Bluesky has taken this account down; reconnect the account.'],
    [401, 'AccountDeactivated', 'Account is deactivated', 'reauthorize', 'Bluesky says this account is deactivated; reconnect the account.'],
    [429, 'RateLimitExceeded', 'Rate Limit Exceeded', 'rate_limited', 'Bluesky is rate limiting this account; try again later.', 90],
    [400, 'RecordNotFound', 'Could not locate record', 'gone', 'Bluesky no longer has this post.'],
    [400, 'NotFound', 'Post not found', 'gone', 'Bluesky no longer has this post.'],
    [400, 'BlobNotFound', 'Could not find blob', 'retryable', 'Bluesky lost an uploaded image; send the request again.'],
    [400, 'InvalidSwap', 'Commit was at x', 'retryable', 'Bluesky saw a concurrent change to the account; try again.'],
    [413, 'PayloadTooLarge', 'request entity too large', 'permanent', 'Bluesky refused the post: an image is too large.'],
    [502, 'UpstreamFailure', 'Upstream service unreachable', 'retryable', 'Bluesky could not reach its own services; try again later.'],
    [500, 'InternalServerError', 'Internal Server Error', 'retryable', 'Bluesky is having trouble; try again later.'],
    [400, 'InvalidRequest', 'Invalid app.bsky.feed.post record: Record/text grapheme too big (maximum 300, got 301)', 'permanent', 'Bluesky refused the post: the text is too long.'],
    [400, 'InvalidRequest', 'Invalid app.bsky.feed.post record: Record/text string too big (maximum 3000, got 3025)', 'permanent', 'Bluesky refused the post: the text is too long.'],
    [400, 'InvalidRequest', 'Record/embed/images array too big (maximum 4, got 5)', 'permanent', 'Bluesky refused the post: it has too many images.'],
    [400, 'InvalidRequest', 'blob too big (maximum 1000000, got 1200000)', 'permanent', 'Bluesky refused the post: an image is too large.'],
    [400, 'InvalidRequest', 'Invalid record key: abc: Invalid TID string', 'permanent', 'Bluesky refused the record key Herald chose for the post.'],
    [400, 'InvalidRequest', 'Input/repo must be a string', 'permanent', 'Bluesky refused the request as invalid.'],
    [403, 'Forbidden', 'nope', 'permanent', 'Bluesky does not allow this account to do that.'],
    [404, 'XRPCNotSupported', 'Method Not Implemented', 'permanent', 'The Bluesky server does not offer this operation; check the service URL of the account.'],
  ];
  for (const [status, error, message, kind, clientMessage, wait] of rows) {
    it(`${status} ${error}${error === 'InvalidRequest' ? ` (${message.slice(0, 30)}…)` : ''} → ${kind}`, () => {
      const headers = status === 429 ? { 'ratelimit-reset': String(NOW.getTime() / 1000 + 90) } : {};
      const failed = classify(new XRPCError(status, error, message, headers), NOW);
      assert.deepEqual(
        { kind: failed.kind, clientMessage: failed.clientMessage, retryAfterSeconds: failed.retryAfterSeconds, detail: failed.detail },
        { kind, clientMessage, retryAfterSeconds: wait, detail: { status, body: `${error}: ${message}` } },
      );
    });
  }

  it('transport failures: not sent or lost → retryable (a record create settles its own lost answer), blocked address → permanent', () => {
    const wrapped = (err: TransportError) => XRPCError.from(err);
    assert.equal(classify(wrapped(new TransportError('not_sent', 'connection failed (ECONNREFUSED)')), NOW).kind, 'retryable');
    assert.equal(classify(wrapped(new TransportError('unknown', 'request timed out')), NOW).kind, 'retryable');
    const blocked = classify(wrapped(new TransportError('not_sent', '10.0.0.1 is not a public address', true)), NOW);
    assert.deepEqual([blocked.kind, blocked.clientMessage], ['permanent', 'The Bluesky server address of this account is not allowed.']);
  });
});

describe('bluesky adapter against the stand-in', () => {
  let bsky: BlueskyStandIn;
  let http: HttpClient;
  let adapter: PlatformAdapter;
  let alice: BlueskyStandInAccount;
  let bob: BlueskyStandInAccount;
  let ctx: PlatformContext;

  beforeEach(async () => {
    bsky = await startBlueskyStandIn();
    http = createHttpClient({ allowInsecure: true, timeoutMs: 400 });
    adapter = createBlueskyAdapter({ http, allowInsecure: true, now: () => NOW });
    alice = bsky.addAccount({ handle: 'alice.test', appPassword: APP_PASSWORD, displayName: 'Alice' });
    bob = bsky.addAccount({ handle: 'bob.test', appPassword: 'bobb-bobb-bobb-bobb' });
    ctx = { credentials: { handle: 'alice.test', app_password: APP_PASSWORD, service_url: bsky.origin }, settings: {} };
  });

  afterEach(async () => {
    await bsky.stop();
    await http.close();
  });

  const creates = () => bsky.standIn.calls('POST', '/xrpc/com.atproto.repo.createRecord');
  const logins = () => bsky.standIn.calls('POST', '/xrpc/com.atproto.server.createSession');

  it('verify logs in with the app password through Herald’s HTTP client and reads the identity', async () => {
    const identity = await adapter.verify(ctx);
    assert.deepEqual(identity, {
      platformAccountId: alice.did,
      username: 'alice.test',
      displayName: 'Alice',
      profileUrl: 'https://bsky.app/profile/alice.test',
      settings: { did: alice.did, handle: 'alice.test', service_url: bsky.origin },
    });
    const [login] = logins();
    assert.deepEqual(login.json, { identifier: 'alice.test', password: APP_PASSWORD });
    assert.equal(login.headers['user-agent'], 'Herald/1.0');
  });

  it('verify reports a refused app password as needing reconnection, and a refused service address before any request', async () => {
    await assert.rejects(
      adapter.verify({ ...ctx, credentials: { ...ctx.credentials, app_password: 'zzzz-zzzz-zzzz-zzzz' } }),
      failure('reauthorize', 'Bluesky refused the handle or app password; reconnect the account.'),
    );
    const strict = createBlueskyAdapter({ http, allowInsecure: false });
    await assert.rejects(
      strict.verify(ctx),
      failure('reauthorize', 'The Bluesky server address of this account is refused: service_url must use https.'),
    );
    assert.equal(logins().length, 1);
  });

  it('publishes text with link and mention facets at the key derived from the post id', async () => {
    const text = 'Hi @bob.test and @nobody.test, see https://example.com/a?b=1 ✨';
    const post = await adapter.publish(ctx, { postId: 'post-1', text, media: [] });
    const rkey = rkeyForPost('post-1');
    assert.deepEqual(post, { platformPostId: `at://${alice.did}/app.bsky.feed.post/${rkey}`, url: `https://bsky.app/profile/alice.test/post/${rkey}` });
    const [create] = creates();
    assert.match(String(create.headers.authorization), /^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
    const linkStart = Buffer.byteLength('Hi @bob.test and @nobody.test, see ');
    assert.deepEqual(create.json, {
      repo: alice.did,
      collection: 'app.bsky.feed.post',
      rkey,
      record: {
        $type: 'app.bsky.feed.post',
        text,
        createdAt: NOW.toISOString(),
        facets: [
          { $type: 'app.bsky.richtext.facet', index: { byteStart: 3, byteEnd: 12 }, features: [{ $type: 'app.bsky.richtext.facet#mention', did: bob.did }] },
          {
            index: { byteStart: linkStart, byteEnd: linkStart + 'https://example.com/a?b=1'.length },
            features: [{ $type: 'app.bsky.richtext.facet#link', uri: 'https://example.com/a?b=1' }],
          },
        ],
      },
    });
    assert.equal(bsky.posts(alice.did).length, 1);
  });

  it('uploads images as raw blobs and always sends alt (empty when none was given)', async () => {
    const jpeg = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(40, 7)]);
    await adapter.publish(ctx, {
      postId: 'post-img',
      text: 'pictures',
      media: [
        { kind: 'image', data: PNG, mimeType: 'image/png', alt: 'a transparent pixel', width: 1, height: 1 },
        { kind: 'image', data: jpeg, mimeType: 'image/jpeg' },
      ],
    });
    const uploads = bsky.standIn.calls('POST', '/xrpc/com.atproto.repo.uploadBlob');
    assert.deepEqual(
      uploads.map((u) => [u.headers['content-type'], u.body.equals(u === uploads[0] ? PNG : jpeg)]),
      [
        ['image/png', true],
        ['image/jpeg', true],
      ],
    );
    const [stored] = bsky.posts(alice.did);
    assert.deepEqual(
      stored.value.embed.images.map((i: any) => ({ alt: i.alt, aspectRatio: i.aspectRatio, mimeType: i.image.mimeType, size: i.image.size, $type: i.image.$type })),
      [
        { alt: 'a transparent pixel', aspectRatio: { width: 1, height: 1 }, mimeType: 'image/png', size: PNG.length, $type: 'blob' },
        { alt: '', aspectRatio: undefined, mimeType: 'image/jpeg', size: jpeg.length, $type: 'blob' },
      ],
    );
    assert.equal(stored.value.embed.$type, 'app.bsky.embed.images');
  });

  it('refuses a video before uploading anything', async () => {
    await assert.rejects(
      adapter.publish(ctx, { postId: 'v', text: 'v', media: [{ kind: 'video', data: Buffer.alloc(10), mimeType: 'video/mp4' }] }),
      failure('permanent', 'Bluesky posts made through Herald take images only.'),
    );
    assert.equal(bsky.standIn.calls('POST', '/xrpc/com.atproto.repo.uploadBlob').length, 0);
  });

  it('chains thread parts with reply.root and reply.parent read from the parent record', async () => {
    const first = await adapter.publish(ctx, { postId: 't1', text: 'one', media: [] });
    const second = await adapter.publish(ctx, { postId: 't2', text: 'two', media: [], replyTo: { platformPostId: first.platformPostId } });
    const third = await adapter.publish(ctx, {
      postId: 't3',
      text: 'three',
      media: [],
      replyTo: { platformPostId: second.platformPostId, rootPlatformPostId: first.platformPostId },
    });
    const ref = (uri: string) => ({ uri, cid: bsky.record(uri)!.cid });
    assert.deepEqual(bsky.record(second.platformPostId)!.value.reply, { root: ref(first.platformPostId), parent: ref(first.platformPostId) });
    assert.deepEqual(bsky.record(third.platformPostId)!.value.reply, { root: ref(first.platformPostId), parent: ref(second.platformPostId) });
    assert.equal(logins().length, 1, 'the session is reused');
  });

  it('a thread part whose parent is gone is refused without creating anything', async () => {
    const first = await adapter.publish(ctx, { postId: 't1', text: 'one', media: [] });
    bsky.remove(first.platformPostId);
    await assert.rejects(
      adapter.publish(ctx, { postId: 't2', text: 'two', media: [], replyTo: { platformPostId: first.platformPostId } }),
      failure('permanent', 'Bluesky no longer has the post this one replies to.'),
    );
    assert.equal(creates().length, 1);
  });

  it('a repeated create with the same post id makes no second post (the PDS answers 500; the post is found)', async () => {
    const first = await adapter.publish(ctx, { postId: 'same', text: 'once only', media: [] });
    const again = await adapter.publish(ctx, { postId: 'same', text: 'once only', media: [] });
    assert.deepEqual(again, first);
    assert.equal(bsky.posts(alice.did).length, 1);
    assert.equal(creates().length, 2);
    assert.deepEqual(
      bsky.standIn.calls('GET', '/xrpc/com.atproto.repo.getRecord').map((r) => r.query.rkey),
      [rkeyForPost('same')],
    );
    assert.deepEqual(await adapter.findPublished!(ctx, { postId: 'same', text: 'once only', media: [] }), first);
    assert.equal(await adapter.findPublished!(ctx, { postId: 'other', text: 'once only', media: [] }), null);
  });

  it('a different post already at the key is refused, not reported as ours', async () => {
    await adapter.publish(ctx, { postId: 'k', text: 'first text', media: [] });
    await assert.rejects(
      adapter.publish(ctx, { postId: 'k', text: 'edited text', media: [] }),
      failure('permanent', 'Bluesky already holds a different post under the key Herald uses for this one.'),
    );
  });

  it('a create that times out after taking effect is found, not repeated', async () => {
    bsky.standIn.inject({ method: 'POST', path: '/xrpc/com.atproto.repo.createRecord' }, { kind: 'hang', thenHandle: true });
    const post = await adapter.publish(ctx, { postId: 'slow', text: 'slow but there', media: [] });
    assert.equal(post.platformPostId, `at://${alice.did}/app.bsky.feed.post/${rkeyForPost('slow')}`);
    assert.equal(bsky.posts(alice.did).length, 1);
    assert.equal(creates().length, 1);
  });

  it('a create that timed out and is not there is retryable, and the retry makes exactly one post', async () => {
    bsky.standIn.inject({ method: 'POST', path: '/xrpc/com.atproto.repo.createRecord' }, { kind: 'hang' });
    await assert.rejects(
      adapter.publish(ctx, { postId: 'lost', text: 'try again', media: [] }),
      failure('retryable', 'Bluesky did not answer in time and the post is not there; sending it again is safe.'),
    );
    await adapter.publish(ctx, { postId: 'lost', text: 'try again', media: [] });
    assert.equal(bsky.posts(alice.did).length, 1);
  });

  it('a create with no answer that cannot be looked up either is an unknown outcome', async () => {
    bsky.standIn.inject({ method: 'POST', path: '/xrpc/com.atproto.repo.createRecord' }, { kind: 'reset', thenHandle: true });
    bsky.standIn.inject({ method: 'GET', path: '/xrpc/com.atproto.repo.getRecord' }, { kind: 'reset' });
    await assert.rejects(
      adapter.publish(ctx, { postId: 'cut', text: 'cut off', media: [] }),
      failure('unknown_outcome', 'Bluesky did not answer in time; the request may or may not have taken effect.'),
    );
    assert.equal(bsky.posts(alice.did).length, 1);
  });

  it('a blob upload that times out is retryable (nothing was posted), and the retry posts once', async () => {
    bsky.standIn.inject({ method: 'POST', path: '/xrpc/com.atproto.repo.uploadBlob' }, { kind: 'hang' });
    const request = { postId: 'slow-blob', text: 'with a picture', media: [{ kind: 'image' as const, data: PNG, mimeType: 'image/png' }] };
    await assert.rejects(adapter.publish(ctx, request), failure('retryable', 'Bluesky did not answer in time; try again.'));
    assert.equal(creates().length, 0);
    await adapter.publish(ctx, request);
    assert.equal(bsky.posts(alice.did).filter((p) => p.value.text === 'with a picture').length, 1);
  });

  it('deletes a post, and deleting it again still resolves (the PDS answers 200 {})', async () => {
    const post = await adapter.publish(ctx, { postId: 'd', text: 'bye', media: [] });
    await adapter.delete(ctx, post.platformPostId);
    await adapter.delete(ctx, post.platformPostId);
    const deletes = bsky.standIn.calls('POST', '/xrpc/com.atproto.repo.deleteRecord');
    assert.deepEqual(
      deletes.map((d) => d.json),
      [0, 1].map(() => ({ repo: alice.did, collection: 'app.bsky.feed.post', rkey: rkeyForPost('d') })),
    );
    assert.equal(bsky.posts(alice.did).length, 0);
    assert.equal(await adapter.resolveUrl!(ctx, post.platformPostId), null);
    await assert.rejects(adapter.delete(ctx, 'https://bsky.app/x'), failure('permanent', 'Herald does not recognise this Bluesky post id.'));
  });

  it('resolveUrl builds the bsky.app link with the current handle', async () => {
    const post = await adapter.publish(ctx, { postId: 'u', text: 'link me', media: [] });
    assert.equal(await adapter.resolveUrl!(ctx, post.platformPostId), post.url);
  });

  it('renews an expired access token with the refresh token, without logging in again', async () => {
    await adapter.publish(ctx, { postId: 'a', text: 'a', media: [] });
    bsky.expireAccessTokens();
    await adapter.publish(ctx, { postId: 'b', text: 'b', media: [] });
    assert.equal(logins().length, 1);
    assert.equal(bsky.standIn.calls('POST', '/xrpc/com.atproto.server.refreshSession').length, 1);
    assert.equal(bsky.posts(alice.did).length, 2);
  });

  it('logs in again with the app password when the refresh token is refused too', async () => {
    await adapter.publish(ctx, { postId: 'a', text: 'a', media: [] });
    bsky.revokeSessions();
    await adapter.publish(ctx, { postId: 'b', text: 'b', media: [] });
    assert.equal(logins().length, 2);
    assert.equal(bsky.posts(alice.did).length, 2);
  });

  it('asks for reconnection when the app password was revoked', async () => {
    await adapter.publish(ctx, { postId: 'a', text: 'a', media: [] });
    bsky.changeAppPassword(alice.did, 'wxyz-wxyz-wxyz-wxyz');
    await assert.rejects(
      adapter.publish(ctx, { postId: 'b', text: 'b', media: [] }),
      failure('reauthorize', 'Bluesky refused the handle or app password; reconnect the account.'),
    );
    assert.equal(bsky.posts(alice.did).length, 1);
  });

  it('classifies the platform answers once (table by status and XRPC error name)', async () => {
    const reset = String(Math.floor(NOW.getTime() / 1000) + 42);
    const createPath = { method: 'POST', path: '/xrpc/com.atproto.repo.createRecord' };
    const rows: [object, ReturnType<typeof failure>][] = [
      [
        { status: 429, json: { error: 'RateLimitExceeded', message: 'Rate Limit Exceeded' }, headers: { 'ratelimit-limit': '5000', 'ratelimit-remaining': '0', 'ratelimit-reset': reset, 'ratelimit-policy': '5000;w=3600' } },
        failure('rate_limited', 'Bluesky is rate limiting this account; try again later.', 42),
      ],
      [{ status: 400, json: { error: 'InvalidRequest', message: 'Invalid app.bsky.feed.post record: Record/text grapheme too big (maximum 300, got 301)' } }, failure('permanent', 'Bluesky refused the post: the text is too long.')],
      [{ status: 400, json: { error: 'InvalidRequest', message: 'Input/record must be an object' } }, failure('permanent', 'Bluesky refused the request as invalid.')],
      [{ status: 500, json: { error: 'InternalServerError', message: 'Internal Server Error' } }, failure('retryable', 'Bluesky is having trouble; try again later.')],
      [{ status: 503, json: { error: 'NotEnoughResources', message: 'busy' } }, failure('retryable', 'Bluesky is having trouble; try again later.')],
      [{ status: 400, json: { error: 'BlobNotFound', message: 'Could not find blob' } }, failure('retryable', 'Bluesky lost an uploaded image; send the request again.')],
      [{ status: 403, json: { error: 'Forbidden', message: 'nope' } }, failure('permanent', 'Bluesky does not allow this account to do that.')],
    ];
    for (const [i, [response, expected]] of rows.entries()) {
      bsky.standIn.inject(createPath, { kind: 'reply', response: response as never });
      await assert.rejects(adapter.publish(ctx, { postId: `e${i}`, text: 'x', media: [] }), expected);
    }
    // A 401 makes the library try a refresh first; for a taken-down account that is refused too.
    const takedown = { kind: 'reply' as const, response: { status: 401, json: { error: 'AccountTakedown', message: 'Account has been taken down' } } };
    bsky.standIn.inject(createPath, takedown);
    bsky.standIn.inject({ method: 'POST', path: '/xrpc/com.atproto.server.refreshSession' }, takedown);
    await assert.rejects(adapter.publish(ctx, { postId: 'td', text: 'x', media: [] }), failure('reauthorize', 'Bluesky has taken this account down; reconnect the account.'));
    // Rate limits without a reset header fall back to Retry-After.
    bsky.standIn.inject(createPath, { kind: 'reply', response: { status: 429, json: { error: 'RateLimitExceeded', message: 'Rate Limit Exceeded' }, headers: { 'retry-after': '7' } } });
    await assert.rejects(adapter.publish(ctx, { postId: 'r', text: 'x', media: [] }), failure('rate_limited', 'Bluesky is rate limiting this account; try again later.', 7));
    bsky.standIn.inject({ method: 'POST', path: '/xrpc/com.atproto.repo.uploadBlob' }, { kind: 'reply', response: { status: 413, json: { error: 'PayloadTooLarge', message: 'request entity too large' } } });
    await assert.rejects(
      adapter.publish(ctx, { postId: 'big', text: 'x', media: [{ kind: 'image', data: PNG, mimeType: 'image/png' }] }),
      failure('permanent', 'Bluesky refused the post: an image is too large.'),
    );
    assert.equal(bsky.posts(alice.did).length, 0);
  });

  it('the PDS’s own refusals reach the same rows (real validation, no injected answer)', async () => {
    await assert.rejects(adapter.publish(ctx, { postId: 'long', text: 'x'.repeat(301), media: [] }), failure('permanent', 'Bluesky refused the post: the text is too long.'));
    // 121 ZWJ families: 121 graphemes but 3,025 UTF-8 bytes, over the lexicon's maxLength of 3,000.
    await assert.rejects(adapter.publish(ctx, { postId: 'bytes', text: '👨‍👩‍👧‍👦'.repeat(121), media: [] }), failure('permanent', 'Bluesky refused the post: the text is too long.'));
    const five = Array.from({ length: 5 }, () => ({ kind: 'image' as const, data: PNG, mimeType: 'image/png' }));
    await assert.rejects(adapter.publish(ctx, { postId: 'five', text: 'x', media: five }), failure('permanent', 'Bluesky refused the post: it has too many images.'));
    await assert.rejects(
      adapter.delete(ctx, `at://${alice.did}/app.bsky.feed.like/3abc`),
      failure('permanent', 'Herald does not recognise this Bluesky post id.'),
    );
  });

  describe('comments', () => {
    async function postWithReplies() {
      const post = await adapter.publish(ctx, { postId: 'c', text: 'talk to me', media: [] });
      const t0 = Date.parse('2026-11-20T10:00:00.000Z');
      const top = bsky.reply(post.platformPostId, bob, 'first!', new Date(t0));
      const nested = bsky.reply(top.uri, alice as BlueskyStandInAccount, 'thanks bob', new Date(t0 + 60_000));
      const later = bsky.reply(post.platformPostId, bob, 'second', new Date(t0 + 120_000));
      bsky.setLikes(top.uri, 3);
      return { post, top, nested, later };
    }

    it('lists every reply of the thread, newest first, with parents, authors and own flags', async () => {
      const { post, top, nested, later } = await postWithReplies();
      const page = await adapter.listComments!(ctx, post.platformPostId);
      assert.deepEqual(page, {
        nextCursor: null,
        comments: [
          {
            platformCommentId: later.uri,
            platformParentId: null,
            author: { handle: 'bob.test', displayName: 'bob.test', platformId: bob.did, avatarUrl: null },
            text: 'second',
            createdAt: '2026-11-20T10:02:00.000Z',
            likes: 0,
            replies: 0,
            own: false,
          },
          {
            platformCommentId: nested.uri,
            platformParentId: top.uri,
            author: { handle: 'alice.test', displayName: 'Alice', platformId: alice.did, avatarUrl: null },
            text: 'thanks bob',
            createdAt: '2026-11-20T10:01:00.000Z',
            likes: 0,
            replies: 0,
            own: true,
          },
          {
            platformCommentId: top.uri,
            platformParentId: null,
            author: { handle: 'bob.test', displayName: 'bob.test', platformId: bob.did, avatarUrl: null },
            text: 'first!',
            createdAt: '2026-11-20T10:00:00.000Z',
            likes: 3,
            replies: 1,
            own: false,
          },
        ],
      });
      const [read] = bsky.standIn.calls('GET', '/xrpc/app.bsky.feed.getPostThread');
      assert.deepEqual(read.query, { uri: post.platformPostId, depth: '100', parentHeight: '0' });
    });

    it('pages in memory with a cursor that new replies do not shift', async () => {
      const post = await adapter.publish(ctx, { postId: 'many', text: 'many', media: [] });
      const t0 = Date.parse('2026-11-20T00:00:00.000Z');
      for (let i = 0; i < 120; i += 1) bsky.reply(post.platformPostId, bob, `reply ${i}`, new Date(t0 + i * 1000));
      const first = await adapter.listComments!(ctx, post.platformPostId);
      assert.equal(first.comments.length, 50);
      assert.equal(first.comments[0].text, 'reply 119');
      bsky.reply(post.platformPostId, bob, 'brand new', new Date(t0 + 500_000));
      const second = await adapter.listComments!(ctx, post.platformPostId, first.nextCursor!);
      const third = await adapter.listComments!(ctx, post.platformPostId, second.nextCursor!);
      assert.deepEqual(
        [...second.comments, ...third.comments].map((c) => c.text),
        Array.from({ length: 70 }, (_, i) => `reply ${69 - i}`),
      );
      assert.equal(third.nextCursor, null);
      await assert.rejects(
        adapter.listComments!(ctx, post.platformPostId, 'garbage'),
        failure('permanent', `The comment cursor for the Bluesky post ${rkeyForPost('many')} is not valid.`),
      );
    });

    it('reads of a deleted post are gone; an AppView outage is retryable', async () => {
      const { post } = await postWithReplies();
      bsky.standIn.inject(
        { method: 'GET', path: '/xrpc/app.bsky.feed.getPostThread' },
        { kind: 'reply', response: { status: 502, json: { error: 'UpstreamFailure', message: 'Upstream service unreachable' } } },
      );
      await assert.rejects(adapter.listComments!(ctx, post.platformPostId), failure('retryable', 'Bluesky could not reach its own services; try again later.'));
      bsky.remove(post.platformPostId);
      await assert.rejects(adapter.listComments!(ctx, post.platformPostId), failure('gone', 'Bluesky no longer has this post.'));
    });

    it('replies to a comment under the post’s root, at a key chosen before sending', async () => {
      const { post, top } = await postWithReplies();
      const reply = await adapter.replyToComment!(ctx, post.platformPostId, top.uri, 'glad you like it');
      const stored = bsky.record(reply.platformPostId)!;
      assert.deepEqual(stored.value.reply, {
        root: { uri: post.platformPostId, cid: bsky.record(post.platformPostId)!.cid },
        parent: { uri: top.uri, cid: top.cid },
      });
      assert.equal(reply.url, `https://bsky.app/profile/alice.test/post/${stored.rkey}`);
      const [, create] = creates();
      assert.equal(create.json.rkey, stored.rkey);
      assert.equal(isTid(stored.rkey), true);
      await assert.rejects(
        adapter.replyToComment!(ctx, post.platformPostId, `at://${bob.did}/app.bsky.feed.post/3aaaaaaaaaaaa`, 'to nothing'),
        failure('gone', 'Bluesky no longer has the post this one replies to.'),
      );
    });

    it('a reply attempt sent twice lands on one key: the second create is refused there and answers the first reply', async () => {
      const { post, top } = await postWithReplies();
      const attempt = '6f1d2c3b-4a59-5876-9a10-123456789abc';
      const first = await adapter.replyToComment!(ctx, post.platformPostId, top.uri, 'said once', attempt);
      const again = await adapter.replyToComment!(ctx, post.platformPostId, top.uri, 'said once', attempt);
      assert.equal(again.platformPostId, first.platformPostId);
      assert.equal(bsky.record(first.platformPostId)!.rkey, rkeyForReply(attempt));
      assert.equal(creates().filter((c) => c.json.record?.text === 'said once').length, 2, 'sent twice, kept once');
    });

    it('deletes own replies only', async () => {
      const { nested, top } = await postWithReplies();
      await adapter.deleteComment!(ctx, nested.uri);
      assert.equal(bsky.record(nested.uri), undefined);
      await adapter.deleteComment!(ctx, nested.uri);
      await assert.rejects(adapter.deleteComment!(ctx, top.uri), failure('permanent', 'Bluesky lets an account delete only its own replies.'));
      assert.ok(bsky.record(top.uri));
      assert.equal(adapter.hideComment, undefined);
    });
  });
});
