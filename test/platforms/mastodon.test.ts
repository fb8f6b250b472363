import assert from 'node:assert/strict';
import { ApiError } from '../../src/errors';
import { createHttpClient, type HttpClient } from '../../src/net/http';
import { createMastodonAdapter, parseMastodonInstance } from '../../src/platforms/mastodon';
import { htmlToText, replyIdempotencyKey } from '../../src/platforms/mastodon/mapper';
import { PlatformFailure, type MediaItem, type PlatformAdapter, type PlatformContext, type PublishRequest } from '../../src/platforms/types';
import { startMastodonStandIn, type MastodonStandIn, type MastodonStandInAccount } from '../standins/mastodon';

function expectFailure(expected: Partial<Pick<PlatformFailure, 'kind' | 'clientMessage' | 'retryAfterSeconds'>> & { status?: number }) {
  return (err: unknown) => {
    assert.ok(err instanceof PlatformFailure, `expected PlatformFailure, got ${String(err)}`);
    assert.equal(err.platform, 'mastodon');
    if (expected.kind) assert.equal(err.kind, expected.kind);
    if (expected.clientMessage) assert.equal(err.clientMessage, expected.clientMessage);
    if ('retryAfterSeconds' in expected) assert.equal(err.retryAfterSeconds, expected.retryAfterSeconds);
    if (expected.status) assert.equal(err.detail?.status, expected.status);
    return true;
  };
}

const POST_ID = '3a4f9b7e-0000-4000-8000-000000000001';
const post = (text: string, media: MediaItem[] = [], replyTo?: string): PublishRequest => ({ postId: POST_ID, text, media, ...(replyTo ? { replyTo: { platformPostId: replyTo } } : {}) });
const video = (): MediaItem => ({ data: Buffer.from('mp4-bytes'), mimeType: 'video/mp4', kind: 'video', alt: 'A short clip' });

describe('parseMastodonInstance', () => {
  const accepted: Array<[string, string]> = [
    ['mastodon.social', 'https://mastodon.social'],
    ['  Mastodon.Social  ', 'https://mastodon.social'],
    ['@alice@mastodon.social', 'https://mastodon.social'],
    ['alice@fosstodon.org', 'https://fosstodon.org'],
    ['https://mastodon.social/@alice', 'https://mastodon.social'],
    ['https://mastodon.social/@alice/113500000000000001', 'https://mastodon.social'],
    ['mastodon.social/@alice', 'https://mastodon.social'],
    ['https://social.example.org:8443', 'https://social.example.org:8443'],
  ];
  for (const [input, origin] of accepted) {
    it(`"${input}" → ${origin}`, () => assert.equal(parseMastodonInstance(input), origin));
  }

  const refused: Array<[string, string]> = [
    ['', 'instance_url must name a Mastodon server, like mastodon.social, @user@mastodon.social or https://mastodon.social/@user.'],
    ['http://mastodon.social', 'instance_url must use https; plain http is refused.'],
    ['ftp://mastodon.social', 'instance_url must be an https address, like mastodon.social, @user@mastodon.social or https://mastodon.social/@user.'],
    ['https://user:pw@mastodon.social', 'instance_url must not carry a user name or password.'],
    ['localhost', 'instance_url must name a public Mastodon server, like mastodon.social, @user@mastodon.social or https://mastodon.social/@user.'],
    ['https://127.0.0.1', 'instance_url must name a public Mastodon server, like mastodon.social, @user@mastodon.social or https://mastodon.social/@user.'],
    ['not a server', 'instance_url "not a server" is not a server name, handle or URL, like mastodon.social, @user@mastodon.social or https://mastodon.social/@user.'],
  ];
  for (const [input, message] of refused) {
    it(`refuses "${input}" with 400 mastodon_instance_invalid`, () => {
      assert.throws(
        () => parseMastodonInstance(input),
        (err: unknown) => err instanceof ApiError && err.status === 400 && err.code === 'mastodon_instance_invalid' && err.message === message,
      );
    });
  }

  it('allows plain http and local hosts only with allowInsecure', () => {
    assert.equal(parseMastodonInstance('http://127.0.0.1:3001/@alice', { allowInsecure: true }), 'http://127.0.0.1:3001');
    assert.equal(parseMastodonInstance('localhost:3000', { allowInsecure: true }), 'https://localhost:3000');
  });
});

describe('mastodon mapper', () => {
  it('turns status HTML into text, keeping breaks and decoding entities', () => {
    assert.equal(
      htmlToText('<p><span class="h-card"><a href="https://m.s/@bob" class="u-url mention">@<span>bob</span></a></span> Tom &amp; Jerry&#39;s &lt;3</p><p>line<br />two &#x1F600;</p>'),
      "@bob Tom & Jerry's <3\n\nline\ntwo 😀",
    );
  });
});

describe('mastodon adapter against the Mastodon stand-in', () => {
  let m: MastodonStandIn;
  let http: HttpClient;
  let adapter: PlatformAdapter;
  let alice: MastodonStandInAccount;
  let ctx: PlatformContext;
  let clock: number;
  let sleeps: number[];

  beforeEach(async () => {
    m = await startMastodonStandIn();
    alice = m.addAccount('alice', { token: 'alice-token' });
    http = createHttpClient({ allowInsecure: true, timeoutMs: 400 });
    clock = Date.parse('2026-11-21T12:00:00Z');
    sleeps = [];
    adapter = createMastodonAdapter({
      http,
      allowInsecure: true,
      now: () => new Date(clock),
      sleep: async (ms) => {
        sleeps.push(ms);
        clock += ms;
      },
    });
    ctx = { credentials: { access_token: 'alice-token' }, settings: { instance_origin: m.origin, account_id: alice.id, username: 'alice' } };
  });

  afterEach(async () => {
    await http.close();
    await m.stop();
  });

  describe('verify', () => {
    it('reads the account and keeps only the server of instance_url', async () => {
      const identity = await adapter.verify({ credentials: { instance_url: `${m.origin}/@alice`, access_token: 'alice-token' }, settings: {} });
      const host = new URL(m.origin).host;
      assert.deepEqual(identity, {
        platformAccountId: `${alice.id}@${host}`,
        username: `alice@${host}`,
        displayName: 'Alice',
        profileUrl: `${m.origin}/@alice`,
        settings: { instance_origin: m.origin, account_id: alice.id, username: 'alice' },
      });
      const [call] = m.standIn.calls('GET', '/api/v1/accounts/verify_credentials');
      assert.equal(call.headers.authorization, 'Bearer alice-token');
    });

    it('an invalid token (401 The access token is invalid) needs reconnecting', async () => {
      await assert.rejects(
        adapter.verify({ credentials: { instance_url: m.origin, access_token: 'nope' }, settings: {} }),
        expectFailure({ kind: 'reauthorize', clientMessage: "Mastodon no longer accepts this account's access token; reconnect the account.", status: 401 }),
      );
    });
  });

  describe('publish', () => {
    it('posts the status with an Idempotency-Key derived from the Herald post id', async () => {
      const published = await adapter.publish(ctx, post('Hello fediverse'));
      const [status] = m.liveStatuses();
      assert.deepEqual(published, { platformPostId: status.id, url: `${m.origin}/@alice/${status.id}` });
      const [call] = m.standIn.calls('POST', '/api/v1/statuses');
      assert.deepEqual(call.json, { status: 'Hello fediverse' });
      assert.equal(call.headers['idempotency-key'], `herald-post-${POST_ID}`);
      assert.equal(call.headers.authorization, 'Bearer alice-token');
    });

    it('a thread part replies with in_reply_to_id', async () => {
      const first = await adapter.publish(ctx, post('1/2'));
      await adapter.publish(ctx, { ...post('2/2', [], first.platformPostId), postId: 'other-post' });
      assert.deepEqual(m.standIn.calls('POST', '/api/v1/statuses')[1].json, { status: '2/2', in_reply_to_id: first.platformPostId });
    });

    it('images upload through /api/v2/media with the alt text as description', async () => {
      const png: MediaItem = { data: Buffer.from('png-bytes'), mimeType: 'image/png', kind: 'image', alt: 'A chart' };
      await adapter.publish(ctx, post('Chart', [png, { ...png, alt: undefined }]));
      const uploads = m.standIn.calls('POST', '/api/v2/media');
      assert.deepEqual(
        uploads.map((u) => [u.form, u.multipart!.find((p) => p.file)!.file!.mimeType, u.multipart!.find((p) => p.file)!.file!.data.toString()]),
        [
          [{ description: 'A chart' }, 'image/png', 'png-bytes'],
          [{}, 'image/png', 'png-bytes'],
        ],
      );
      const ids = m.standIn.calls('POST', '/api/v1/statuses')[0].json.media_ids;
      assert.equal(ids.length, 2);
      assert.equal(m.media(ids[0])?.description, 'A chart');
      assert.equal(m.standIn.calls('GET', /^\/api\/v1\/media\//).length, 0);
    });

    it('a video answered 202 is polled (206 while processing) until 200, then posted', async () => {
      await adapter.publish(ctx, post('Clip', [video()]));
      const [upload] = m.standIn.calls('POST', '/api/v2/media');
      const id = m.standIn.calls('POST', '/api/v1/statuses')[0].json.media_ids[0];
      assert.equal(upload.form!.description, 'A short clip');
      assert.deepEqual(m.standIn.calls('GET', `/api/v1/media/${id}`).length, 2);
      assert.deepEqual(sleeps, [2000, 2000]);
    });

    it('a video still processing after one minute publishes nothing and says to send again (rule 6)', async () => {
      m.config.videoPollsUntilReady = 1000;
      await assert.rejects(
        adapter.publish(ctx, post('Clip', [video()])),
        expectFailure({ kind: 'permanent', clientMessage: 'Mastodon is still processing the video; nothing was published. Send the same request again.' }),
      );
      assert.equal(sleeps.reduce((a, b) => a + b, 0), 60_000);
      assert.equal(m.statuses().length, 0);
    });

    it('a video the server fails to process (422 on the poll) publishes nothing', async () => {
      m.config.videoFails = true;
      await assert.rejects(
        adapter.publish(ctx, post('Clip', [video()])),
        expectFailure({ kind: 'permanent', clientMessage: 'Mastodon could not process the media; nothing was published.', status: 422 }),
      );
      assert.equal(m.statuses().length, 0);
    });

    it('a create whose answer is lost is repeated once with the same key; the server keeps one status', async () => {
      m.standIn.inject({ method: 'POST', path: '/api/v1/statuses' }, { kind: 'hang', thenHandle: true });
      const published = await adapter.publish(ctx, post('exactly once'));
      assert.equal(m.statuses().length, 1);
      assert.equal(published.platformPostId, m.statuses()[0].id);
      const calls = m.standIn.calls('POST', '/api/v1/statuses');
      assert.deepEqual(calls.map((c) => c.headers['idempotency-key']), [`herald-post-${POST_ID}`, `herald-post-${POST_ID}`]);
    });

    it('a thread sent again within the key\'s hour after Herald deleted its statuses (rolled back) is new statuses; a repeat finds them', async () => {
      const part2 = (replyTo: string) => ({ ...post('2/2', [], replyTo), postId: 'part-2' });
      const first = await adapter.publish(ctx, post('1/2'));
      const firstPart2 = await adapter.publish(ctx, part2(first.platformPostId));
      await adapter.delete(ctx, firstPart2.platformPostId);
      await adapter.delete(ctx, first.platformPostId);
      const again = await adapter.publish(ctx, post('1/2'));
      assert.notEqual(again.platformPostId, first.platformPostId);
      assert.deepEqual(await adapter.publish(ctx, post('1/2')), again);
      const againPart2 = await adapter.publish(ctx, part2(again.platformPostId));
      assert.deepEqual(m.liveStatuses().map((st) => [st.id, st.in_reply_to_id]), [
        [again.platformPostId, null],
        [againPart2.platformPostId, again.platformPostId],
      ]);
      assert.deepEqual(m.standIn.calls('POST', '/api/v1/statuses').map((c) => c.headers['idempotency-key']), [
        `herald-post-${POST_ID}`,
        'herald-post-part-2',
        `herald-post-${POST_ID}`,
        `herald-post-${POST_ID}-g1`,
        `herald-post-${POST_ID}`,
        `herald-post-${POST_ID}-g1`,
        'herald-post-part-2',
        'herald-post-part-2-g1',
      ]);
    });

    it('a resent Herald post (same id) gets the same status back, not a second one', async () => {
      const first = await adapter.publish(ctx, post('same post'));
      const again = await adapter.publish(ctx, post('same post'));
      assert.deepEqual(again, first);
      assert.equal(m.statuses().length, 1);
    });

    it('a 503 on create is repeated once (same key); a second 503 is retryable', async () => {
      m.standIn.inject({ method: 'POST', path: '/api/v1/statuses' }, { kind: 'reply', response: { status: 503, json: { error: 'Service Unavailable' } } }, 2);
      await assert.rejects(adapter.publish(ctx, post('hi')), expectFailure({ kind: 'retryable', clientMessage: 'The Mastodon server is having trouble; try again later.', status: 503 }));
      m.standIn.inject({ method: 'POST', path: '/api/v1/statuses' }, { kind: 'reply', response: { status: 500, json: { error: 'boom' } } }, 1);
      await adapter.publish(ctx, post('hi'));
      assert.equal(m.statuses().length, 1);
    });

    it('text over the server limit (422 Validation failed) is a permanent refusal', async () => {
      await assert.rejects(
        adapter.publish(ctx, post('a'.repeat(501))),
        expectFailure({ kind: 'permanent', clientMessage: 'Mastodon refused the post: the server found it invalid (for example too long for this server, or media it cannot attach).', status: 422 }),
      );
    });

    it('a token without write scope (403) needs reconnecting', async () => {
      m.addAccount('reader', { token: 'read-only', scopes: ['read'] });
      await assert.rejects(
        adapter.publish({ ...ctx, credentials: { access_token: 'read-only' } }, post('hi')),
        expectFailure({ kind: 'reauthorize', clientMessage: 'Mastodon refused this access token for posting; reconnect the account with write permission.', status: 403 }),
      );
    });

    it('a reply to a status that is gone (404 Record not found) is gone', async () => {
      await assert.rejects(adapter.publish(ctx, post('late reply', [], '999')), expectFailure({ kind: 'gone', status: 404 }));
    });

    const injected: Array<[number, Partial<PlatformFailure>]> = [
      [400, { kind: 'permanent', clientMessage: 'Mastodon refused the request as invalid.' }],
      [410, { kind: 'reauthorize', clientMessage: 'Mastodon says this account no longer exists on the server; reconnect the account.' }],
      [418, { kind: 'permanent', clientMessage: 'Mastodon gave an unexpected answer.' }],
    ];
    for (const [status, expected] of injected) {
      it(`classifies ${status}`, async () => {
        m.standIn.inject({ method: 'POST', path: '/api/v1/statuses' }, { kind: 'reply', response: { status, json: { error: 'raw' } } });
        await assert.rejects(adapter.publish(ctx, post('hi')), expectFailure({ ...expected, status }));
      });
    }

    it('a 429 waits until the ISO 8601 X-RateLimit-Reset', async () => {
      m.rateLimit('/api/v1/statuses', new Date(clock + 90_000));
      await assert.rejects(
        adapter.publish(ctx, post('hi')),
        expectFailure({ kind: 'rate_limited', clientMessage: 'Mastodon is rate limiting this account; try again later.', retryAfterSeconds: 90, status: 429 }),
      );
    });

    it('an instance address the SSRF guard refuses is permanent, not retried', async () => {
      const guarded = createHttpClient({ allowInsecure: false, timeoutMs: 400 });
      try {
        const blocked = createMastodonAdapter({ http: guarded });
        await assert.rejects(blocked.publish(ctx, post('hi')), expectFailure({ kind: 'permanent', clientMessage: 'The Mastodon server address is refused: it is not a public https address.' }));
        assert.equal(m.standIn.calls().length, 0);
      } finally {
        await guarded.close();
      }
    });

    it('a server that cannot be reached is retryable', async () => {
      const gone = { ...ctx, settings: { ...ctx.settings, instance_origin: 'http://127.0.0.1:1' } };
      await assert.rejects(adapter.publish(gone, post('hi')), expectFailure({ kind: 'retryable' }));
    });
  });

  describe('delete', () => {
    it('deletes the status', async () => {
      const { platformPostId } = await adapter.publish(ctx, post('bye'));
      await adapter.delete(ctx, platformPostId);
      assert.equal(m.liveStatuses().length, 0);
      assert.equal(m.standIn.calls('DELETE', `/api/v1/statuses/${platformPostId}`).length, 1);
    });

    it('a status already gone (404 Record not found) counts as deleted', async () => {
      const { platformPostId } = await adapter.publish(ctx, post('bye'));
      await adapter.delete(ctx, platformPostId);
      await adapter.delete(ctx, platformPostId);
      assert.equal(m.standIn.calls('DELETE').length, 2);
    });
  });

  describe('comments', () => {
    it('reads /context descendants newest first, paged in memory by the last id seen', async () => {
      const root = await adapter.publish(ctx, post('Thoughts?'));
      const bob = m.addAccount('bob', { remoteHost: 'fosstodon.org' });
      const replies = Array.from({ length: 44 }, (_, i) => m.addReply(root.platformPostId, bob, `reply ${i}`));
      const nested = m.addReply(replies[0].id, bob, 'Tom & Jerry\n\nsecond paragraph');
      const first = await adapter.listComments!(ctx, root.platformPostId);
      assert.equal(first.comments.length, 40);
      assert.deepEqual(first.comments[0], {
        platformCommentId: nested.id,
        platformParentId: replies[0].id,
        author: { handle: 'bob@fosstodon.org', displayName: 'Bob', platformId: bob.id, avatarUrl: `${m.origin}/avatars/bob.png` },
        text: 'Tom & Jerry\n\nsecond paragraph',
        createdAt: nested.created_at,
        likes: 0,
        replies: 0,
        own: false,
      });
      assert.equal(first.nextCursor, first.comments[39].platformCommentId);
      m.addReply(root.platformPostId, bob, 'arrives between pages');
      const second = await adapter.listComments!(ctx, root.platformPostId, first.nextCursor!);
      assert.deepEqual(second.comments.map((c) => c.text), ['reply 4', 'reply 3', 'reply 2', 'reply 1', 'reply 0']);
      assert.equal(second.nextCursor, null);
      assert.equal(second.comments[4].platformParentId, null);
    });

    it('replies to a comment idempotently and deletes its own reply', async () => {
      const root = await adapter.publish(ctx, post('Thoughts?'));
      const comment = m.addReply(root.platformPostId, m.addAccount('bob'), 'Nice');
      const reply = await adapter.replyToComment!(ctx, root.platformPostId, comment.id, 'Thanks!');
      const again = await adapter.replyToComment!(ctx, root.platformPostId, comment.id, 'Thanks!');
      assert.deepEqual(again, reply);
      const calls = m.standIn.calls('POST', '/api/v1/statuses').slice(1);
      assert.deepEqual(calls.map((c) => [c.json, c.headers['idempotency-key']]), [
        [{ status: 'Thanks!', in_reply_to_id: comment.id }, replyIdempotencyKey(comment.id, 'Thanks!')],
        [{ status: 'Thanks!', in_reply_to_id: comment.id }, replyIdempotencyKey(comment.id, 'Thanks!')],
      ]);
      const { comments } = await adapter.listComments!(ctx, root.platformPostId);
      assert.deepEqual(comments.map((c) => [c.text, c.own]), [
        ['Thanks!', true],
        ['Nice', false],
      ]);
      await adapter.deleteComment!(ctx, reply.platformPostId);
      assert.equal(m.liveStatuses().some((s) => s.id === reply.platformPostId), false);
    });

    it('the same reply after Herald deleted the first within the key\'s hour is a new reply; a reply to a deleted comment is gone', async () => {
      const root = await adapter.publish(ctx, post('Thoughts?'));
      const comment = m.addReply(root.platformPostId, m.addAccount('bob'), 'Nice');
      const reply = await adapter.replyToComment!(ctx, root.platformPostId, comment.id, 'Thanks!');
      await adapter.deleteComment!(ctx, reply.platformPostId);
      const again = await adapter.replyToComment!(ctx, root.platformPostId, comment.id, 'Thanks!');
      assert.notEqual(again.platformPostId, reply.platformPostId);
      assert.deepEqual(await adapter.replyToComment!(ctx, root.platformPostId, comment.id, 'Thanks!'), again);
      assert.equal(m.liveStatuses().filter((st) => st.in_reply_to_id === comment.id).length, 1);
      comment.deleted = true; // bob deleted his comment
      await assert.rejects(adapter.replyToComment!(ctx, root.platformPostId, comment.id, 'Thanks!'), expectFailure({ kind: 'gone', status: 404 }));
    });

    it('a post that is gone has no context (404 → gone)', async () => {
      await assert.rejects(adapter.listComments!(ctx, '424242'), expectFailure({ kind: 'gone', clientMessage: 'Mastodon has no such post.' }));
    });

    it('hiding comments is not offered (Mastodon has no API for it)', () => {
      assert.equal(adapter.hideComment, undefined);
    });
  });

  it('resolveUrl builds <instance>/@<user>/<id>', async () => {
    assert.equal(await adapter.resolveUrl!(ctx, '77'), `${m.origin}/@alice/77`);
  });
});
