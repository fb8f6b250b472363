import assert from 'node:assert/strict';
import { createHttpClient, type HttpClient } from '../../src/net/http';
import { createXAdapter } from '../../src/platforms/x';
import { createXClient } from '../../src/platforms/x/client';
import { X_MEDIA_PERMISSION_MESSAGE } from '../../src/platforms/x/errors';
import { createTweetBody, isPremium } from '../../src/platforms/x/mapper';
import { hmacSha1Signature, oauth1Header, percentEncode, signatureBaseString } from '../../src/platforms/x/oauth1';
import { PlatformFailure, type MediaItem, type PlatformAdapter, type PlatformContext, type PublishRequest } from '../../src/platforms/types';
import { startXStandIn, type XStandIn, type XStandInUser } from '../standins/x';

function expectFailure(expected: Partial<Pick<PlatformFailure, 'kind' | 'clientMessage' | 'retryAfterSeconds'>> & { status?: number }) {
  return (err: unknown) => {
    assert.ok(err instanceof PlatformFailure, `expected PlatformFailure, got ${String(err)}`);
    assert.equal(err.platform, 'x');
    if (expected.kind) assert.equal(err.kind, expected.kind);
    if (expected.clientMessage) assert.equal(err.clientMessage, expected.clientMessage);
    if ('retryAfterSeconds' in expected) assert.equal(err.retryAfterSeconds, expected.retryAfterSeconds);
    if (expected.status) assert.equal(err.detail?.status, expected.status);
    return true;
  };
}

const post = (text: string, media: MediaItem[] = [], replyTo?: string): PublishRequest => ({
  postId: 'b9d6c0a2-0000-4000-8000-000000000001',
  text,
  media,
  ...(replyTo ? { replyTo: { platformPostId: replyTo } } : {}),
});
const jpeg = (n: number, alt?: string): MediaItem => ({ data: Buffer.from(`jpeg-${n}`), mimeType: 'image/jpeg', kind: 'image', ...(alt ? { alt } : {}) });

describe('x OAuth 1.0a signing (RFC 5849 HMAC-SHA1)', () => {
  // The worked example of X's "Creating a signature" page (developer.x.com, api.twitter.com host).
  const url = new URL('https://api.twitter.com/1.1/statuses/update.json?include_entities=true');
  const creds = {
    consumerKey: 'xvz1evFS4wEEPTGEFPHBog',
    consumerSecret: 'kAcSOqF21Fu85e7zjz7ZN2U4ZRhfV3WpwPAoE3Z7kBw',
    token: '370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb',
    tokenSecret: 'LswwdoUaIvS8ltyTt5jkRh4J50vUPVVHtR2YPi5kE',
  };
  const options = {
    timestamp: 1318622958,
    nonce: 'kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg',
    formParams: [['status', 'Hello Ladies + Gentlemen, a signed OAuth request!']] as Array<[string, string]>,
  };

  it('builds the documented signature base string and signature', () => {
    const params: Array<[string, string]> = [
      ['oauth_consumer_key', creds.consumerKey],
      ['oauth_nonce', options.nonce],
      ['oauth_signature_method', 'HMAC-SHA1'],
      ['oauth_timestamp', '1318622958'],
      ['oauth_token', creds.token],
      ['oauth_version', '1.0'],
      ['include_entities', 'true'],
      ...options.formParams,
    ];
    const base = signatureBaseString('POST', url, params);
    assert.equal(
      base,
      'POST&https%3A%2F%2Fapi.twitter.com%2F1.1%2Fstatuses%2Fupdate.json&include_entities%3Dtrue%26oauth_consumer_key%3Dxvz1evFS4wEEPTGEFPHBog%26oauth_nonce%3DkYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D1318622958%26oauth_token%3D370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb%26oauth_version%3D1.0%26status%3DHello%2520Ladies%2520%252B%2520Gentlemen%252C%2520a%2520signed%2520OAuth%2520request%2521',
    );
    assert.equal(hmacSha1Signature(base, creds.consumerSecret, creds.tokenSecret), 'hCtSmYh+iHYCEqBWrE7C7hYmtUk=');
  });

  it('puts the signature in the Authorization header, percent-encoded', () => {
    assert.equal(
      oauth1Header('POST', url, creds, options),
      'OAuth oauth_consumer_key="xvz1evFS4wEEPTGEFPHBog", oauth_nonce="kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg", oauth_signature_method="HMAC-SHA1", oauth_timestamp="1318622958", oauth_token="370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb", oauth_version="1.0", oauth_signature="hCtSmYh%2BiHYCEqBWrE7C7hYmtUk%3D"',
    );
  });

  it('percent-encodes the RFC 3986 reserved characters encodeURIComponent leaves alone', () => {
    assert.equal(percentEncode("a b!*'()~._-é"), 'a%20b%21%2A%27%28%29~._-%C3%A9');
  });
});

describe('x adapter against the X API v2 stand-in', () => {
  let x: XStandIn;
  let http: HttpClient;
  let adapter: PlatformAdapter;
  let me: XStandInUser;
  let ctx: PlatformContext;
  let sleeps: number[];

  beforeEach(async () => {
    x = await startXStandIn();
    me = x.addUser({ username: 'heraldhq', bearerToken: 'user-token-1' });
    http = createHttpClient({ allowInsecure: true, timeoutMs: 400 });
    sleeps = [];
    adapter = createXAdapter({ http, origin: x.origin, sleep: async (ms) => void sleeps.push(ms), chunkBytes: 4 });
    ctx = { credentials: { access_token: 'user-token-1' }, settings: { user_id: me.id, username: 'heraldhq' } };
  });

  afterEach(async () => {
    await http.close();
    await x.stop();
  });

  describe('verify', () => {
    it('reads the user with the fields that reveal a paid subscription', async () => {
      const identity = await adapter.verify({ credentials: { access_token: 'user-token-1' }, settings: {} });
      assert.deepEqual(identity, {
        platformAccountId: me.id,
        username: 'heraldhq',
        displayName: 'Heraldhq',
        profileUrl: 'https://x.com/heraldhq',
        premium: false,
        settings: { user_id: me.id, username: 'heraldhq' },
      });
      const [call] = x.standIn.calls('GET', '/2/users/me');
      assert.deepEqual(call.query, { 'user.fields': 'username,name,profile_image_url,verified,verified_type,subscription_type' });
      assert.equal(call.headers.authorization, 'Bearer user-token-1');
    });

    it('a Premium subscriber is premium', async () => {
      x.addUser({ username: 'paid', bearerToken: 'paid-token', subscription_type: 'Premium', verified_type: 'blue' });
      const identity = await adapter.verify({ credentials: { access_token: 'paid-token' }, settings: {} });
      assert.equal(identity.premium, true);
    });

    it('premium falls back to verified_type blue when subscription_type is absent', () => {
      assert.equal(isPremium({ id: '1', name: 'a', username: 'a', verified_type: 'blue' }), true);
      assert.equal(isPremium({ id: '1', name: 'a', username: 'a', verified_type: 'business' }), false);
      assert.equal(isPremium({ id: '1', name: 'a', username: 'a', subscription_type: 'None', verified_type: 'blue' }), false);
    });

    it('own API keys sign every request with OAuth 1.0a, and the stand-in checks the signature', async () => {
      const keys = { consumerKey: 'ck-own', consumerSecret: 'cs-own-secret', token: '99-tok', tokenSecret: 'ts-own-secret' };
      const owner = x.addUser({ username: 'ownkeys', oauth1: keys });
      const own = { credentials: { api_key: 'ck-own', api_secret: 'cs-own-secret', access_token: '99-tok', access_token_secret: 'ts-own-secret' }, settings: {} };
      const identity = await adapter.verify(own);
      assert.equal(identity.platformAccountId, owner.id);
      assert.match(String(x.standIn.calls('GET', '/2/users/me')[0].headers.authorization), /^OAuth oauth_consumer_key="ck-own", oauth_nonce="[0-9a-f]{32}", oauth_signature_method="HMAC-SHA1", oauth_timestamp="\d+", oauth_token="99-tok", oauth_version="1.0", oauth_signature="[^"]+"$/);
      const published = await adapter.publish({ credentials: own.credentials, settings: identity.settings! }, post('signed post'));
      assert.equal(x.liveTweets().find((t) => t.id === published.platformPostId)?.author_id, owner.id);
    });

    it('a wrong OAuth 1.0a secret gives 401, which needs reconnecting', async () => {
      x.addUser({ username: 'ownkeys', oauth1: { consumerKey: 'ck', consumerSecret: 'right', token: 't', tokenSecret: 'ts' } });
      await assert.rejects(
        adapter.verify({ credentials: { api_key: 'ck', api_secret: 'wrong', access_token: 't', access_token_secret: 'ts' }, settings: {} }),
        expectFailure({ kind: 'reauthorize', clientMessage: "X no longer accepts this account's credentials; reconnect the account.", status: 401 }),
      );
    });

    it('a revoked Bearer token (401 about:blank) needs reconnecting', async () => {
      await assert.rejects(adapter.verify({ credentials: { access_token: 'revoked' }, settings: {} }), expectFailure({ kind: 'reauthorize', status: 401 }));
    });
  });

  describe('publish', () => {
    it('text goes out with POST /2/tweets and links to x.com', async () => {
      const published = await adapter.publish(ctx, post('Hello from Herald'));
      const [tweet] = x.liveTweets();
      assert.deepEqual(published, { platformPostId: tweet.id, url: `https://x.com/heraldhq/status/${tweet.id}` });
      const [call] = x.standIn.calls('POST', '/2/tweets');
      assert.deepEqual(call.json, { text: 'Hello from Herald' });
      assert.equal(call.headers['content-type'], 'application/json');
    });

    it('a thread part replies to the previous part', async () => {
      const first = await adapter.publish(ctx, post('1/2'));
      const second = await adapter.publish(ctx, post('2/2', [], first.platformPostId));
      assert.deepEqual(x.standIn.calls('POST', '/2/tweets')[1].json, { text: '2/2', reply: { in_reply_to_tweet_id: first.platformPostId } });
      assert.equal(x.liveTweets().find((t) => t.id === second.platformPostId)?.conversation_id, first.platformPostId);
    });

    it('images upload one-shot, alt text goes to the metadata endpoint, ids attach to the post', async () => {
      await adapter.publish(ctx, post('Two pictures', [jpeg(1, 'A red door'), jpeg(2)]));
      const uploads = x.standIn.calls('POST', '/2/media/upload');
      assert.deepEqual(
        uploads.map((u) => [u.form, u.multipart!.find((p) => p.file)!.file!.data.toString()]),
        [
          [{ media_category: 'tweet_image' }, 'jpeg-1'],
          [{ media_category: 'tweet_image' }, 'jpeg-2'],
        ],
      );
      const ids = x.standIn.calls('POST', '/2/tweets')[0].json.media.media_ids;
      assert.equal(ids.length, 2);
      assert.deepEqual(x.standIn.calls('POST', '/2/media/metadata').map((c) => c.json), [{ id: ids[0], metadata: { alt_text: { text: 'A red door' } } }]);
      assert.equal(x.media(ids[0])?.alt, 'A red door');
    });

    it('video goes in chunks (initialize, append per segment, finalize), then STATUS until succeeded', async () => {
      const video: MediaItem = { data: Buffer.from('0123456789'), mimeType: 'video/mp4', kind: 'video', alt: 'A clip' };
      const published = await adapter.publish(ctx, post('A video', [video]));
      const [init] = x.standIn.calls('POST', '/2/media/upload/initialize');
      assert.deepEqual(init.json, { media_type: 'video/mp4', total_bytes: 10, media_category: 'tweet_video' });
      const mediaId = x.standIn.calls('POST', '/2/tweets')[0].json.media.media_ids[0];
      const appends = x.standIn.calls('POST', `/2/media/upload/${mediaId}/append`);
      assert.deepEqual(
        appends.map((a) => [a.form!.segment_index, a.multipart!.find((p) => p.file)!.file!.data.toString()]),
        [
          ['0', '0123'],
          ['1', '4567'],
          ['2', '89'],
        ],
      );
      assert.equal(x.standIn.calls('POST', `/2/media/upload/${mediaId}/finalize`).length, 1);
      assert.deepEqual(x.standIn.calls('GET', '/2/media/upload').map((c) => c.query), [
        { command: 'STATUS', media_id: mediaId },
        { command: 'STATUS', media_id: mediaId },
      ]);
      assert.deepEqual(sleeps, [1000, 1000]);
      assert.equal(x.media(mediaId)?.alt, 'A clip');
      assert.ok(published.platformPostId);
    });

    it('a video X fails to process publishes nothing', async () => {
      x.config.videoOutcome = 'failed';
      await assert.rejects(
        adapter.publish(ctx, post('A video', [{ data: Buffer.from('v'), mimeType: 'video/mp4', kind: 'video' }])),
        expectFailure({ kind: 'permanent', clientMessage: 'X could not process the video; nothing was published.' }),
      );
      assert.equal(x.tweets().length, 0);
    });

    it('polling is bounded: a video still processing after 60 checks publishes nothing', async () => {
      x.config.videoPollsUntilReady = 1000;
      await assert.rejects(
        adapter.publish(ctx, post('A video', [{ data: Buffer.from('v'), mimeType: 'video/mp4', kind: 'video' }])),
        expectFailure({ kind: 'permanent', clientMessage: 'X is still processing the video; nothing was published. Send the same request again.' }),
      );
      assert.equal(sleeps.length, 60);
      assert.equal(x.tweets().length, 0);
    });

    it('an account without media permission gets the reconnect message (media rule 7); text still posts', async () => {
      x.addUser({ username: 'noupload', bearerToken: 'no-media', scopes: ['tweet.read', 'tweet.write', 'users.read'] });
      const limited = { credentials: { access_token: 'no-media' }, settings: { user_id: '1002', username: 'noupload' } };
      await assert.rejects(adapter.publish(limited, post('pic', [jpeg(1)])), expectFailure({ kind: 'permanent', clientMessage: X_MEDIA_PERMISSION_MESSAGE, status: 403 }));
      await assert.rejects(
        adapter.publish(limited, post('vid', [{ data: Buffer.from('v'), mimeType: 'video/mp4', kind: 'video' }])),
        expectFailure({ kind: 'permanent', clientMessage: X_MEDIA_PERMISSION_MESSAGE }),
      );
      await adapter.publish(limited, post('text only'));
      assert.deepEqual(x.liveTweets().map((t) => t.text), ['text only']);
    });

    it("another user's media: its upload endpoints answer 404 as for an unknown id (gone), a post with it 400 (permanent); additional_owners may use it", async () => {
      const other = x.addUser({ username: 'someoneelse', bearerToken: 'user-token-2' });
      const otherCredentials = { access_token: 'user-token-2' };
      const client = createXClient(http, x.origin, () => new Date());
      await adapter.publish(ctx, post('mine', [jpeg(1)]));
      const mine: string = x.standIn.calls('POST', '/2/tweets')[0].json.media.media_ids[0];

      const notFound = expectFailure({ kind: 'gone', status: 404 });
      await assert.rejects(client.send(otherCredentials, { method: 'GET', path: '/2/media/upload', query: { command: 'STATUS', media_id: mine }, scope: 'media' }), notFound);
      await assert.rejects(client.send(otherCredentials, { method: 'POST', path: '/2/media/metadata', json: { id: mine, metadata: { alt_text: { text: 'not mine' } } }, scope: 'media' }), notFound);
      await assert.rejects(client.send(otherCredentials, { method: 'POST', path: `/2/media/upload/${mine}/finalize`, scope: 'media' }), notFound);
      await assert.rejects(client.send(otherCredentials, { method: 'GET', path: '/2/media/upload', query: { command: 'STATUS', media_id: '1' }, scope: 'media' }), notFound); // unknown
      assert.equal(x.media(mine)?.alt, undefined, 'the metadata of another user is not written');
      await assert.rejects(
        client.send(otherCredentials, { method: 'POST', path: '/2/tweets', json: createTweetBody('with your picture', [mine]), isCreate: true }),
        expectFailure({ kind: 'permanent', clientMessage: 'X refused the request as invalid.', status: 400 }),
      );
      assert.deepEqual(x.liveTweets().map((t) => t.author_id), [me.id], 'nothing published by the other user');
      // The uploader itself still reads it.
      assert.equal((await client.send<{ data: { id: string } }>(ctx.credentials, { method: 'GET', path: '/2/media/upload', query: { command: 'STATUS', media_id: mine }, scope: 'media' })).data.id, mine);

      // Uploaded naming the other user in additional_owners: it may use the id.
      const shared = await client.send<{ data: { id: string } }>(ctx.credentials, {
        method: 'POST',
        path: '/2/media/upload/initialize',
        json: { media_type: 'image/jpeg', total_bytes: 0, media_category: 'tweet_image', additional_owners: [other.id] },
        scope: 'media',
      });
      await client.send(ctx.credentials, { method: 'POST', path: `/2/media/upload/${shared.data.id}/finalize`, scope: 'media' });
      await client.send(otherCredentials, { method: 'POST', path: '/2/tweets', json: createTweetBody('with a shared picture', [shared.data.id]), isCreate: true });
      assert.deepEqual(x.liveTweets().filter((t) => t.author_id === other.id).map((t) => t.media_ids), [[shared.data.id]]);
    });

    it('text over 280 weighted characters is refused (400 invalid-request); premium allows more', async () => {
      await assert.rejects(adapter.publish(ctx, post('a'.repeat(281))), expectFailure({ kind: 'permanent', clientMessage: 'X refused the request as invalid.', status: 400 }));
      x.addUser({ username: 'paid', bearerToken: 'paid-token', subscription_type: 'Premium' });
      await adapter.publish({ credentials: { access_token: 'paid-token' }, settings: { user_id: '1002', username: 'paid' } }, post('a'.repeat(1000)));
    });

    it('a duplicate post (403 about:blank) is a permanent refusal', async () => {
      await adapter.publish(ctx, post('same words'));
      await assert.rejects(
        adapter.publish(ctx, post('same words')),
        expectFailure({ kind: 'permanent', clientMessage: 'X refused the post as a duplicate of one already on the account.', status: 403 }),
      );
    });

    it('a duplicate refusal after an earlier attempt that never reported back is looked up: that attempt\'s post, or unconfirmed', async () => {
      const earlier = await adapter.publish(ctx, post('same words'));
      assert.deepEqual(await adapter.publish(ctx, { ...post('same words'), earlierAttemptOpen: true }), earlier);
      x.tweets().find((t) => t.id === earlier.platformPostId)!.created_at = new Date(Date.now() - 60 * 60_000).toISOString();
      await assert.rejects(
        adapter.publish(ctx, { ...post('same words'), earlierAttemptOpen: true }),
        expectFailure({ kind: 'unknown_outcome', clientMessage: 'X refused the post as a duplicate of one already on the account; an earlier attempt may have published it.', status: 403 }),
      );
      assert.equal(x.liveTweets().length, 1);
    });

    it('a server error to a create may have taken effect (the retry looks first); to an upload it did not', async () => {
      x.standIn.inject({ method: 'POST', path: '/2/tweets' }, { kind: 'reply', thenHandle: true, response: { status: 503, json: { title: 'Service Unavailable', type: 'about:blank', status: 503 } } });
      await assert.rejects(adapter.publish(ctx, post('made before the 503')), (err: PlatformFailure) => err.kind === 'retryable' && err.mayHaveTakenEffect);
      x.standIn.inject({ method: 'POST', path: /^\/2\/media/ }, { kind: 'reply', response: { status: 503, json: { title: 'Service Unavailable', type: 'about:blank', status: 503 } } });
      await assert.rejects(adapter.publish(ctx, post('upload refused', [jpeg(1)])), (err: PlatformFailure) => err.kind === 'retryable' && !err.mayHaveTakenEffect);
    });

    const injected: Array<[string, number, Record<string, unknown>, Partial<PlatformFailure>]> = [
      ['403 client-forbidden', 403, { type: 'https://api.x.com/2/problems/client-forbidden', title: 'Client Forbidden' }, { kind: 'permanent', clientMessage: "X refused the request: the app's X API access level does not allow it." }],
      ['403 not-authorized-for-resource', 403, { type: 'https://api.x.com/2/problems/not-authorized-for-resource', title: 'Not Authorized' }, { kind: 'permanent', clientMessage: 'X refused the request: this account may not act on that post.' }],
      ['409 conflict', 409, { type: 'about:blank', title: 'Conflict' }, { kind: 'permanent', clientMessage: 'X refused the request because it conflicts with the current state.' }],
      ['500', 500, { type: 'about:blank', title: 'Internal Error' }, { kind: 'retryable', clientMessage: 'X is having trouble; try again later.' }],
      ['503', 503, { type: 'about:blank', title: 'Service Unavailable' }, { kind: 'retryable', clientMessage: 'X is having trouble; try again later.' }],
      ['418 (unlisted)', 418, { type: 'about:blank', title: 'Teapot' }, { kind: 'permanent', clientMessage: 'X gave an unexpected answer.' }],
    ];
    for (const [name, status, body, expected] of injected) {
      it(`classifies ${name}`, async () => {
        x.standIn.inject({ method: 'POST', path: '/2/tweets' }, { kind: 'reply', response: { status, json: { ...body, status, detail: 'raw detail' } } });
        await assert.rejects(adapter.publish(ctx, post('hi')), expectFailure({ ...expected, status }));
      });
    }

    it('a 429 waits until x-rate-limit-reset', async () => {
      const reset = Math.floor(Date.now() / 1000) + 120;
      x.rateLimit('/2/tweets', reset);
      await assert.rejects(adapter.publish(ctx, post('hi')), (err: PlatformFailure) => {
        assert.equal(err.kind, 'rate_limited');
        assert.equal(err.clientMessage, 'X is rate limiting this account; try again later.');
        assert.ok(err.retryAfterSeconds! >= 119 && err.retryAfterSeconds! <= 120, String(err.retryAfterSeconds));
        return true;
      });
    });

    it('a spent 24-hour user cap waits for x-user-limit-24hour-reset', async () => {
      const reset = Math.floor(Date.now() / 1000) + 3600;
      x.standIn.inject(
        { path: '/2/tweets' },
        {
          kind: 'reply',
          response: {
            status: 429,
            headers: { 'x-rate-limit-reset': String(reset - 3000), 'x-user-limit-24hour-remaining': '0', 'x-user-limit-24hour-reset': String(reset) },
            json: { title: 'Too Many Requests', type: 'about:blank', status: 429, detail: 'Too Many Requests' },
          },
        },
      );
      await assert.rejects(adapter.publish(ctx, post('hi')), (err: PlatformFailure) => err.kind === 'rate_limited' && err.retryAfterSeconds! >= 3599);
    });

    it('a 429 usage-capped names the cap', async () => {
      x.rateLimit('/2/tweets', Math.floor(Date.now() / 1000) + 60, 1, 'https://api.x.com/2/problems/usage-capped');
      await assert.rejects(adapter.publish(ctx, post('hi')), expectFailure({ kind: 'rate_limited', clientMessage: "X's usage cap for this app is reached; try again later." }));
    });

    it('a create that timed out after X posted it is found, not repeated', async () => {
      x.standIn.inject({ method: 'POST', path: '/2/tweets' }, { kind: 'hang', thenHandle: true });
      const published = await adapter.publish(ctx, post('Launch day & more: https://example.com/launch'));
      const live = x.liveTweets();
      assert.equal(live.length, 1);
      assert.deepEqual(published, { platformPostId: live[0].id, url: `https://x.com/heraldhq/status/${live[0].id}` });
      assert.equal(x.standIn.calls('POST', '/2/tweets').length, 1);
      const { start_time, ...query } = x.standIn.calls('GET', `/2/users/${me.id}/tweets`)[0].query;
      assert.deepEqual(query, { max_results: '100', 'tweet.fields': 'created_at,referenced_tweets,attachments,entities', exclude: 'retweets' });
      assert.match(start_time ?? '', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/, 'from 15 minutes back, to the second');
    });

    it('a create that timed out and is not on the timeline is unknown_outcome', async () => {
      x.standIn.inject({ method: 'POST', path: '/2/tweets' }, { kind: 'hang' });
      await assert.rejects(
        adapter.publish(ctx, post('lost')),
        expectFailure({ kind: 'unknown_outcome', clientMessage: 'X did not answer in time; the post may or may not have been published.' }),
      );
      assert.equal(x.tweets().length, 0);
    });

    it('an address the SSRF guard refuses is permanent, not retried', async () => {
      const guarded = createHttpClient({ allowInsecure: false, timeoutMs: 400 });
      try {
        const blocked = createXAdapter({ http: guarded, origin: x.origin });
        await assert.rejects(blocked.publish(ctx, post('hi')), expectFailure({ kind: 'permanent', clientMessage: 'The X API address is refused: it is not a public https address.' }));
        assert.equal(x.standIn.calls().length, 0);
      } finally {
        await guarded.close();
      }
    });

    it('a created post is never lost for want of a stored username (username-free link)', async () => {
      const published = await adapter.publish({ ...ctx, settings: { user_id: me.id } }, post('no username stored'));
      assert.equal(published.url, `https://x.com/i/web/status/${published.platformPostId}`);
    });

    it('findPublished matches a media post through the t.co link X appends, and respects the reply parent', async () => {
      const root = await adapter.publish(ctx, post('root'));
      const withPicture = await adapter.publish(ctx, post('look', [jpeg(1)], root.platformPostId));
      assert.deepEqual(await adapter.findPublished!(ctx, post('look', [jpeg(1)], root.platformPostId)), withPicture);
      assert.equal(await adapter.findPublished!(ctx, post('look')), null);
    });

    it('findPublished takes only a post of the last 15 minutes: an older one with the same text is another post', async () => {
      const older = await adapter.publish(ctx, post('Good morning'));
      x.tweets().find((t) => t.id === older.platformPostId)!.created_at = new Date(Date.now() - 16 * 60_000).toISOString();
      assert.equal(await adapter.findPublished!(ctx, post('Good morning')), null);
      x.tweets().find((t) => t.id === older.platformPostId)!.created_at = new Date(Date.now() - 14 * 60_000).toISOString();
      assert.deepEqual(await adapter.findPublished!(ctx, post('Good morning')), older);
    });

    it('findPublished reads every post since the earliest open call (start_time, pages of 100): 130 posts made after it do not hide it', async () => {
      const since = Date.now() - 30 * 60_000;
      const landed = await adapter.publish(ctx, post('landed, then a busy account'));
      for (let i = 0; i < 130; i++) x.addPost(me, `posted by hand ${i}`);
      const older = x.addPost(me, 'posted before the call');
      older.created_at = new Date(since - 2 * 60 * 60_000).toISOString();
      const before = x.standIn.requests.length;
      assert.deepEqual(await adapter.findPublished!(ctx, { ...post('landed, then a busy account'), earlierAttemptOpen: true, earlierAttemptSince: since }), landed);
      const looks = x.standIn.requests.slice(before).filter((r) => r.path === `/2/users/${me.id}/tweets`);
      assert.equal(looks.length, 2, 'two pages of 100');
      // The earliest open call's start less a minute for the two clocks, to X's second.
      assert.equal(looks[0]!.query.start_time, new Date(Math.floor((since - 60_000) / 1000) * 1000).toISOString().replace('.000Z', 'Z'));
      assert.deepEqual([looks[0]!.query.max_results, looks[1]!.query.pagination_token !== undefined], ['100', true]);
    });

    it('findPublished past its bound of pages has not seen everything: the outcome stays unknown, never "not there"', async () => {
      for (let i = 0; i < 501; i++) x.addPost(me, `a very busy account ${i}`);
      await assert.rejects(
        adapter.findPublished!(ctx, { ...post('never sent'), earlierAttemptOpen: true, earlierAttemptSince: Date.now() - 60_000 }),
        expectFailure({ kind: 'unknown_outcome' }),
      );
      // Those posts made before the earliest open call are not read (`start_time`): absent is known again.
      for (const t of x.tweets()) t.created_at = new Date(Date.now() - 30 * 60_000).toISOString();
      assert.equal(await adapter.findPublished!(ctx, { ...post('never sent'), earlierAttemptOpen: true, earlierAttemptSince: Date.now() - 60_000 }), null);
    });

    it('findPublished tells posts apart by their links and their media count (a media-only post matches only one as bare)', async () => {
      const linked = await adapter.publish(ctx, post('Read this: https://example.com/one.'));
      assert.equal(await adapter.findPublished!(ctx, post('Read this: https://example.com/two.')), null);
      assert.equal(await adapter.findPublished!(ctx, post('Read this:')), null);
      assert.deepEqual(await adapter.findPublished!(ctx, post('Read this: https://example.com/one.')), linked);
      const bare = await adapter.publish(ctx, post('', [jpeg(1)]));
      assert.equal(await adapter.findPublished!(ctx, post('', [jpeg(1), jpeg(2)])), null);
      assert.deepEqual(await adapter.findPublished!(ctx, post('', [jpeg(1)])), bare);
    });
  });

  describe('delete', () => {
    it('deletes the post', async () => {
      const { platformPostId } = await adapter.publish(ctx, post('bye'));
      await adapter.delete(ctx, platformPostId);
      assert.equal(x.liveTweets().length, 0);
      assert.equal(x.standIn.calls('DELETE', `/2/tweets/${platformPostId}`).length, 1);
    });

    it('a post already gone (404 resource-not-found) counts as deleted', async () => {
      await adapter.delete(ctx, '1860000000000009999');
    });

    it('a post already gone ({deleted:false}) counts as deleted', async () => {
      x.config.alreadyDeleted = 'deleted_false';
      await adapter.delete(ctx, '1860000000000009999');
    });

    it('a 200 carrying only errors[] of type resource-not-found counts as gone', async () => {
      x.standIn.inject(
        { method: 'DELETE' },
        { kind: 'reply', response: { status: 200, json: { errors: [{ title: 'Not Found Error', type: 'https://api.x.com/2/problems/resource-not-found', detail: 'Could not find post' }] } } },
      );
      await adapter.delete(ctx, '1860000000000000001');
    });

    it('a 200 carrying only errors[] of another type is a permanent refusal', async () => {
      x.standIn.inject(
        { method: 'POST', path: '/2/tweets' },
        { kind: 'reply', response: { status: 200, json: { errors: [{ title: 'Invalid Request', type: 'https://api.x.com/2/problems/invalid-request' }] } } },
      );
      await assert.rejects(adapter.publish(ctx, post('hi')), expectFailure({ kind: 'permanent', clientMessage: 'X refused the request as invalid.', status: 200 }));
    });

    it("someone else's post (403) is refused", async () => {
      const other = x.addUser({ username: 'other', bearerToken: 'other-token' });
      const { platformPostId } = await adapter.publish({ credentials: { access_token: 'other-token' }, settings: { user_id: other.id, username: 'other' } }, post('mine'));
      await assert.rejects(adapter.delete(ctx, platformPostId), expectFailure({ kind: 'permanent', status: 403 }));
    });

    it('a delete that timed out is retryable', async () => {
      x.standIn.inject({ method: 'DELETE' }, { kind: 'hang' });
      await assert.rejects(adapter.delete(ctx, '1'), expectFailure({ kind: 'retryable', clientMessage: 'X did not answer in time; try again.' }));
    });
  });

  describe('comments', () => {
    it('reads replies by conversation_id with next_token paging', async () => {
      const root = await adapter.publish(ctx, post('Ask me anything'));
      const fan = x.addUser({ username: 'fan' });
      for (let i = 0; i < 104; i++) x.addReply(root.platformPostId, fan, `question ${i}`);
      const nested = x.addReply(x.liveTweets()[1].id, fan, 'follow-up & more');
      const first = await adapter.listComments!(ctx, root.platformPostId);
      assert.equal(first.comments.length, 100);
      assert.ok(first.nextCursor);
      assert.deepEqual(first.comments[0], {
        platformCommentId: nested.id,
        platformParentId: x.liveTweets()[1].id,
        author: { handle: 'fan', displayName: 'Fan', platformId: fan.id, avatarUrl: `https://pbs.twimg.com/profile_images/${fan.id}/normal.jpg` },
        text: 'follow-up & more',
        createdAt: nested.created_at,
        likes: 0,
        replies: 0,
        own: false,
      });
      const second = await adapter.listComments!(ctx, root.platformPostId, first.nextCursor!);
      assert.equal(second.comments.length, 5);
      assert.equal(second.nextCursor, null);
      assert.equal(second.comments[4].platformParentId, null);
      const [, secondCall] = x.standIn.calls('GET', '/2/tweets/search/recent');
      assert.deepEqual(secondCall.query, {
        query: `conversation_id:${root.platformPostId}`,
        'tweet.fields': 'author_id,created_at,in_reply_to_user_id,referenced_tweets,conversation_id,public_metrics',
        expansions: 'author_id,referenced_tweets.id',
        'user.fields': 'username,name,profile_image_url',
        max_results: '100',
        next_token: first.nextCursor,
      });
    });

    it('a post with no replies lists nothing', async () => {
      const root = await adapter.publish(ctx, post('quiet'));
      assert.deepEqual(await adapter.listComments!(ctx, root.platformPostId), { comments: [], nextCursor: null });
    });

    it('replies to a comment, marks own replies, and deletes its own reply', async () => {
      const root = await adapter.publish(ctx, post('Ask me anything'));
      const comment = x.addReply(root.platformPostId, x.addUser({ username: 'fan' }), 'hello?');
      const reply = await adapter.replyToComment!(ctx, root.platformPostId, comment.id, 'hello back');
      assert.deepEqual(x.standIn.calls('POST', '/2/tweets')[1].json, { text: 'hello back', reply: { in_reply_to_tweet_id: comment.id } });
      const { comments } = await adapter.listComments!(ctx, root.platformPostId);
      assert.deepEqual(comments.map((c) => [c.text, c.own, c.platformParentId]), [
        ['hello back', true, comment.id],
        ['hello?', false, null],
      ]);
      await adapter.deleteComment!(ctx, reply.platformPostId);
      assert.equal(x.liveTweets().some((t) => t.id === reply.platformPostId), false);
    });

    it('hiding replies is not offered (capability table: x hide no)', () => {
      assert.equal(adapter.hideComment, undefined);
    });

    it('looks tweets up by id (GET /2/tweets?ids=) for what they answer, two links a call; a deleted or top-level one gives none', async () => {
      const root = await adapter.publish(ctx, post('Where do these hang'));
      const fan = x.addUser({ username: 'chainfan' });
      const a = x.addReply(root.platformPostId, fan, 'level one');
      const b = x.addReply(a.id, fan, 'level two');
      const gone = x.addReply(a.id, fan, 'deleted later');
      gone.deleted = true;
      assert.deepEqual(await adapter.commentParents!(ctx, [b.id, gone.id, root.platformPostId]), [
        { id: b.id, parentId: a.id },
        { id: a.id, parentId: root.platformPostId },
      ]);
      const [call] = x.standIn.calls('GET', '/2/tweets');
      assert.deepEqual([call!.query.ids, call!.query['tweet.fields'], call!.query.expansions], [`${b.id},${gone.id},${root.platformPostId}`, 'referenced_tweets', 'referenced_tweets.id']);
    });

    it('the stand-in answers a lookup as X does: a missing id in errors (200), more than 100 ids or none 400', async () => {
      const auth = { authorization: 'Bearer user-token-1' };
      const missing = await fetch(`${x.origin}/2/tweets?ids=1860000000000999999`, { headers: auth });
      assert.equal(missing.status, 200);
      const body = (await missing.json()) as { data?: unknown; errors: Array<{ type: string; resource_id: string; parameter: string }> };
      assert.equal(body.data, undefined);
      assert.deepEqual(body.errors.map((e) => [e.type, e.resource_id, e.parameter]), [['https://api.x.com/2/problems/resource-not-found', '1860000000000999999', 'ids']]);
      const tooMany = Array.from({ length: 101 }, (_, i) => String(1860000000000000000n + BigInt(i))).join(',');
      assert.equal((await fetch(`${x.origin}/2/tweets?ids=${tooMany}`, { headers: auth })).status, 400);
      assert.equal((await fetch(`${x.origin}/2/tweets`, { headers: auth })).status, 400);
    });
  });

  it('resolveUrl builds the x.com link', async () => {
    assert.equal(await adapter.resolveUrl!(ctx, '123'), 'https://x.com/heraldhq/status/123');
  });
});
