import assert from 'node:assert/strict';
import net from 'node:net';
import { createHttpClient, type HttpClient } from '../../src/net/http';
import { createTelegramAdapter } from '../../src/platforms/telegram';
import { PlatformFailure, type MediaItem, type PlatformAdapter, type PlatformContext, type PublishRequest } from '../../src/platforms/types';
import { png as pngBytes } from '../media/fixtures';
import { startTelegramStandIn, type TelegramStandIn } from '../standins/telegram';

/** An origin nothing listens on (a port just released). */
async function closedOrigin(): Promise<string> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

const TOKEN = '7000000001:AAH-herald-test-token';

function expectFailure(expected: Partial<Pick<PlatformFailure, 'kind' | 'clientMessage' | 'retryAfterSeconds'>> & { status?: number }) {
  return (err: unknown) => {
    assert.ok(err instanceof PlatformFailure, `expected PlatformFailure, got ${String(err)}`);
    assert.equal(err.platform, 'telegram');
    if (expected.kind) assert.equal(err.kind, expected.kind);
    if (expected.clientMessage) assert.equal(err.clientMessage, expected.clientMessage);
    if ('retryAfterSeconds' in expected) assert.equal(err.retryAfterSeconds, expected.retryAfterSeconds);
    if (expected.status) assert.equal(err.detail?.status, expected.status);
    return true;
  };
}

const png = (n: number): MediaItem => ({ data: Buffer.from(`png-bytes-${n}`), mimeType: 'image/png', kind: 'image', alt: `alt ${n}` });
const photo = (width: number, height: number): MediaItem => ({ data: pngBytes(width, height), mimeType: 'image/png', kind: 'image' });
const post = (text: string, media: MediaItem[] = []): PublishRequest => ({ postId: '6f1c1d7e-0000-4000-8000-000000000001', text, media });

describe('telegram adapter against the Bot API stand-in', () => {
  let tg: TelegramStandIn;
  let http: HttpClient;
  let adapter: PlatformAdapter;
  let channel: { id: number };
  let ctx: PlatformContext;
  let now: Date;

  beforeEach(async () => {
    tg = await startTelegramStandIn();
    tg.addBot(TOKEN);
    channel = tg.addChat({ username: 'herald_news', title: 'Herald News' });
    http = createHttpClient({ allowInsecure: true, timeoutMs: 400 });
    now = new Date();
    adapter = createTelegramAdapter({ http, origin: tg.origin, now: () => now });
    ctx = { credentials: { bot_token: TOKEN, chat_id: '@herald_news' }, settings: { chat_id: String(channel.id), chat_username: 'herald_news' } };
  });

  afterEach(async () => {
    await http.close();
    await tg.stop();
  });

  describe('verify', () => {
    it('reads the bot and the public channel, keeping the numeric chat id', async () => {
      const identity = await adapter.verify({ credentials: { bot_token: TOKEN, chat_id: '@herald_news' }, settings: {} });
      assert.deepEqual(identity, {
        platformAccountId: String(channel.id),
        username: '@herald_news',
        displayName: 'Herald News',
        profileUrl: 'https://t.me/herald_news',
        settings: { chat_id: String(channel.id), chat_username: 'herald_news', bot_id: '7000000001', bot_username: 'herald_test_bot' },
      });
      assert.deepEqual(
        tg.standIn.calls().map((c) => [c.method, c.path, c.json]),
        [
          ['POST', `/bot${TOKEN}/getMe`, {}],
          ['POST', `/bot${TOKEN}/getChat`, { chat_id: '@herald_news' }],
          ['POST', `/bot${TOKEN}/getChatMember`, { chat_id: channel.id, user_id: 7000000001 }],
        ],
      );
    });

    it('refuses a channel where the bot is not an administrator allowed to post', async () => {
      tg.setBotMember(channel.id, 7000000001, { status: 'administrator', can_post_messages: false });
      await assert.rejects(
        adapter.verify({ credentials: { bot_token: TOKEN, chat_id: '@herald_news' }, settings: {} }),
        expectFailure({ kind: 'permanent', clientMessage: 'Telegram: the bot is not an administrator allowed to post in this channel; give it that right and connect again.' }),
      );
      tg.setBotMember(channel.id, 7000000001, { status: 'member' });
      await assert.rejects(adapter.verify({ credentials: { bot_token: TOKEN, chat_id: '@herald_news' }, settings: {} }), expectFailure({ kind: 'permanent' }));
    });

    it('refuses a group the bot has left', async () => {
      const group = tg.addChat({ title: 'Team room', type: 'supergroup' });
      tg.removeBotFromChat(group.id, 7000000001);
      await assert.rejects(
        adapter.verify({ credentials: { bot_token: TOKEN, chat_id: String(group.id) }, settings: {} }),
        expectFailure({ kind: 'permanent', clientMessage: 'Telegram: the bot is not a member allowed to post in this group; add it and connect again.' }),
      );
    });

    it('a private group has no public link', async () => {
      const group = tg.addChat({ title: 'Team room', type: 'supergroup' });
      const identity = await adapter.verify({ credentials: { bot_token: TOKEN, chat_id: String(group.id) }, settings: {} });
      assert.equal(identity.profileUrl, null);
      assert.equal(identity.username, 'Team room');
      assert.equal(identity.settings?.chat_username, '');
      const published = await adapter.publish({ credentials: ctx.credentials, settings: identity.settings! }, post('hello team'));
      assert.deepEqual(published, { platformPostId: '1', url: null });
    });

    it('a token Telegram refuses (401 Unauthorized) needs reconnecting', async () => {
      await assert.rejects(
        adapter.verify({ credentials: { bot_token: '123:wrong', chat_id: '@herald_news' }, settings: {} }),
        expectFailure({ kind: 'reauthorize', clientMessage: 'Telegram no longer accepts this bot token; reconnect the account.', status: 401 }),
      );
    });

    it('an unknown chat (400 chat not found) needs reconnecting', async () => {
      await assert.rejects(
        adapter.verify({ credentials: { bot_token: TOKEN, chat_id: '@nobody_here' }, settings: {} }),
        expectFailure({ kind: 'reauthorize', clientMessage: 'Telegram cannot find the chat; check the chat id and reconnect the account.', status: 400 }),
      );
    });
  });

  describe('publish', () => {
    it('text goes out with sendMessage and links to t.me', async () => {
      const published = await adapter.publish(ctx, post('Hello from Herald'));
      assert.deepEqual(published, { platformPostId: '1', url: 'https://t.me/herald_news/1' });
      const [call] = tg.standIn.calls('POST', `/bot${TOKEN}/sendMessage`);
      assert.deepEqual(call.json, { chat_id: String(channel.id), text: 'Hello from Herald' });
      assert.equal(tg.messages(channel.id).length, 1);
    });

    it('one image goes with sendPhoto as multipart bytes and the text as caption', async () => {
      await adapter.publish(ctx, post('A picture', [png(1)]));
      const [call] = tg.standIn.calls('POST', `/bot${TOKEN}/sendPhoto`);
      assert.deepEqual(call.form, { chat_id: String(channel.id), caption: 'A picture' });
      const file = call.multipart!.find((p) => p.name === 'photo')!.file!;
      assert.deepEqual([file.filename, file.mimeType, file.data.toString()], ['photo.png', 'image/png', 'png-bytes-1']);
    });

    it('a video goes with sendVideo and a GIF with sendAnimation', async () => {
      await adapter.publish(ctx, post('clip', [{ data: Buffer.from('mp4'), mimeType: 'video/mp4', kind: 'video' }]));
      await adapter.publish(ctx, post('loop', [{ data: Buffer.from('gif'), mimeType: 'image/gif', kind: 'image' }]));
      assert.deepEqual(
        tg.messages(channel.id).map((m) => [m.kind, m.caption, m.file?.mimeType]),
        [
          ['video', 'clip', 'video/mp4'],
          ['animation', 'loop', 'image/gif'],
        ],
      );
    });

    it('2-10 files go as one album with sendMediaGroup; the post id names every message', async () => {
      const published = await adapter.publish(ctx, post('Album', [png(1), png(2), png(3)]));
      assert.deepEqual(published, { platformPostId: '1,2,3', url: 'https://t.me/herald_news/1' });
      const [call] = tg.standIn.calls('POST', `/bot${TOKEN}/sendMediaGroup`);
      assert.deepEqual(JSON.parse(call.form!.media), [
        { type: 'photo', media: 'attach://file0', caption: 'Album' },
        { type: 'photo', media: 'attach://file1' },
        { type: 'photo', media: 'attach://file2' },
      ]);
      assert.deepEqual(call.multipart!.filter((p) => p.file).map((p) => [p.name, p.file!.data.toString()]), [
        ['file0', 'png-bytes-1'],
        ['file1', 'png-bytes-2'],
        ['file2', 'png-bytes-3'],
      ]);
    });

    it('a thread part is a standalone message (no reply chain)', async () => {
      await adapter.publish(ctx, post('part 1'));
      await adapter.publish(ctx, { ...post('part 2'), replyTo: { platformPostId: '1' } });
      const second = tg.standIn.calls('POST', `/bot${TOKEN}/sendMessage`)[1];
      assert.deepEqual(second.json, { chat_id: String(channel.id), text: 'part 2' });
    });

    const DIMENSIONS = 'Telegram refused the post: a photo is too large or too narrow (width and height at most 10,000 pixels together, sides at most 20:1).';
    const refusals: Array<[string, PublishRequest, string]> = [
      ['text over 4,096 characters', post('x'.repeat(4097)), 'Telegram refused the post: the text is too long.'],
      ['caption over 1,024 characters', post('x'.repeat(1025), [png(1)]), 'Telegram refused the post: the caption is too long.'],
      ['empty text', post('   '), 'Telegram refused the post: the text is empty.'],
      ['a photo of 800 × 12,000 pixels (PHOTO_INVALID_DIMENSIONS)', post('tall', [photo(800, 12_000)]), DIMENSIONS],
      ['a photo of 100 × 2,500 pixels in an album (sides over 20:1)', post('narrow', [photo(10, 10), photo(100, 2_500)]), DIMENSIONS],
    ];
    for (const [name, req, message] of refusals) {
      it(`refuses ${name} permanently (400)`, async () => {
        await assert.rejects(adapter.publish(ctx, req), expectFailure({ kind: 'permanent', clientMessage: message, status: 400 }));
        assert.equal(tg.messages().length, 0);
      });
    }

    it('an unclassified 400 is a permanent refusal', async () => {
      tg.standIn.inject({ path: /sendMessage$/ }, { kind: 'reply', response: { status: 400, json: { ok: false, error_code: 400, description: 'Bad Request: something new' } } });
      await assert.rejects(adapter.publish(ctx, post('hi')), expectFailure({ kind: 'permanent', clientMessage: 'Telegram refused the request as invalid.' }));
    });

    it('a bot removed from the channel (403) needs reconnecting', async () => {
      tg.removeBotFromChat(channel.id, 7000000001);
      await assert.rejects(
        adapter.publish(ctx, post('hi')),
        expectFailure({ kind: 'reauthorize', clientMessage: 'Telegram refused: the bot may no longer post in this chat; make it an administrator again and reconnect.', status: 403 }),
      );
    });

    it('a token Telegram cannot parse (404 Not Found) needs reconnecting', async () => {
      tg.standIn.inject({ path: /sendMessage$/ }, { kind: 'reply', response: { status: 404, json: { ok: false, error_code: 404, description: 'Not Found' } } });
      await assert.rejects(adapter.publish(ctx, post('hi')), expectFailure({ kind: 'reauthorize', clientMessage: 'Telegram does not recognise this bot token; reconnect the account.' }));
    });

    it('a group upgraded to a supergroup (400 with migrate_to_chat_id) needs reconnecting', async () => {
      tg.standIn.inject(
        { path: /sendMessage$/ },
        { kind: 'reply', response: { status: 400, json: { ok: false, error_code: 400, description: 'Bad Request: group chat was upgraded to a supergroup chat', parameters: { migrate_to_chat_id: -1009999 } } } },
      );
      await assert.rejects(adapter.publish(ctx, post('hi')), expectFailure({ kind: 'reauthorize', clientMessage: 'Telegram says the group became a supergroup with a new id; reconnect the account.', status: 400 }));
    });

    it('a channel admin without can_post_messages (400 need administrator rights) is a permanent refusal', async () => {
      tg.setBotMember(channel.id, 7000000001, { status: 'administrator', can_post_messages: false });
      await assert.rejects(adapter.publish(ctx, post('hi')), expectFailure({ kind: 'permanent', clientMessage: 'Telegram refused the request as invalid.', status: 400 }));
    });

    it('an address the SSRF guard refuses is permanent, not retried', async () => {
      const guarded = createHttpClient({ allowInsecure: false, timeoutMs: 400 });
      try {
        const blocked = createTelegramAdapter({ http: guarded, origin: tg.origin });
        await assert.rejects(blocked.publish(ctx, post('hi')), expectFailure({ kind: 'permanent', clientMessage: 'The Telegram Bot API address is refused: it is not a public https address.' }));
        assert.equal(tg.standIn.calls().length, 0);
      } finally {
        await guarded.close();
      }
    });

    it('a 409 conflict is permanent', async () => {
      tg.standIn.inject({ path: /sendMessage$/ }, { kind: 'reply', response: { status: 409, json: { ok: false, error_code: 409, description: 'Conflict: terminated by other getUpdates request' } } });
      await assert.rejects(adapter.publish(ctx, post('hi')), expectFailure({ kind: 'permanent', status: 409 }));
    });

    it('flood control (429) is rate limited for parameters.retry_after seconds', async () => {
      tg.floodWait('sendMessage', 7);
      await assert.rejects(
        adapter.publish(ctx, post('hi')),
        expectFailure({ kind: 'rate_limited', clientMessage: 'Telegram is rate limiting this bot; try again later.', retryAfterSeconds: 7, status: 429 }),
      );
    });

    for (const status of [500, 502]) {
      it(`a ${status} is retryable, even without a Bot API body; to a send it may have taken effect`, async () => {
        tg.standIn.inject({ path: /sendMessage$/ }, { kind: 'reply', thenHandle: true, response: { status, text: '<html>Bad Gateway</html>' } });
        await assert.rejects(adapter.publish(ctx, post('hi')), expectFailure({ kind: 'retryable', clientMessage: 'Telegram is having trouble; try again later.', status }));
        tg.standIn.inject({ path: /sendMessage$/ }, { kind: 'reply', thenHandle: true, response: { status, text: '<html>Bad Gateway</html>' } });
        await assert.rejects(adapter.publish(ctx, post('hi')), (err: PlatformFailure) => err.mayHaveTakenEffect);
        assert.deepEqual(tg.messages(channel.id).map((m) => m.text), ['hi', 'hi']);
      });
    }

    it('a send that times out after Telegram acted is unknown_outcome and is not repeated', async () => {
      tg.standIn.inject({ path: /sendMessage$/ }, { kind: 'hang', thenHandle: true });
      await assert.rejects(
        adapter.publish(ctx, post('only once')),
        expectFailure({ kind: 'unknown_outcome', clientMessage: 'Telegram did not answer in time; the message may or may not have been posted.' }),
      );
      assert.equal(tg.standIn.calls('POST', /sendMessage$/).length, 1);
      assert.deepEqual(tg.messages(channel.id).map((m) => m.text), ['only once']);
    });

    it('a connection refused before sending is retryable', async () => {
      const closed = createTelegramAdapter({ http, origin: await closedOrigin() });
      await assert.rejects(closed.publish(ctx, post('hi')), expectFailure({ kind: 'retryable', clientMessage: 'Telegram could not be reached; nothing was sent.' }));
    });
  });

  describe('delete', () => {
    it('deletes one message with deleteMessage', async () => {
      const { platformPostId } = await adapter.publish(ctx, post('bye'));
      await adapter.delete(ctx, platformPostId, now);
      const [call] = tg.standIn.calls('POST', `/bot${TOKEN}/deleteMessage`);
      assert.deepEqual(call.json, { chat_id: String(channel.id), message_id: 1 });
      assert.equal(tg.messages(channel.id)[0].deleted, true);
    });

    it('a message already gone (400 message to delete not found) counts as deleted', async () => {
      await adapter.delete(ctx, '41');
      assert.equal(tg.standIn.calls('POST', /deleteMessage$/).length, 1);
    });

    it('an album is deleted whole with deleteMessages', async () => {
      const { platformPostId } = await adapter.publish(ctx, post('Album', [png(1), png(2)]));
      await adapter.delete(ctx, platformPostId);
      const [call] = tg.standIn.calls('POST', `/bot${TOKEN}/deleteMessages`);
      assert.deepEqual(call.json, { chat_id: String(channel.id), message_ids: [1, 2] });
      assert.deepEqual(tg.messages(channel.id).map((m) => m.deleted), [true, true]);
    });

    it('past 48 hours the adapter refuses without calling Telegram', async () => {
      const publishedAt = new Date(now.getTime() - 48 * 3600_000 - 1000);
      await assert.rejects(
        adapter.delete(ctx, '1', publishedAt),
        expectFailure({ kind: 'permanent', clientMessage: 'Telegram lets bots delete messages only within 48 hours of posting; this one is older and stays on Telegram.' }),
      );
      assert.equal(tg.standIn.calls().length, 0);
    });

    it("Telegram's own refusal of an old message (message can't be deleted) is permanent", async () => {
      const { platformPostId } = await adapter.publish(ctx, post('old'));
      tg.setNow(Date.now() + 49 * 3600_000);
      await assert.rejects(
        adapter.delete(ctx, platformPostId),
        expectFailure({ kind: 'permanent', clientMessage: 'Telegram refused to delete the message: it is older than 48 hours or the bot may not delete it.', status: 400 }),
      );
      assert.equal(tg.messages(channel.id)[0].deleted, false);
    });

    it('a delete that times out is retryable (deleting twice is harmless)', async () => {
      tg.standIn.inject({ path: /deleteMessage$/ }, { kind: 'hang' });
      await assert.rejects(adapter.delete(ctx, '1'), expectFailure({ kind: 'retryable', clientMessage: 'Telegram did not answer in time; try again.' }));
    });
  });

  it('resolveUrl links the first message of a public channel post', async () => {
    assert.equal(await adapter.resolveUrl!(ctx, '5,6'), 'https://t.me/herald_news/5');
  });

  it('offers no comment operations (capability table: none)', () => {
    assert.deepEqual([adapter.listComments, adapter.replyToComment, adapter.hideComment, adapter.deleteComment, adapter.findPublished], [undefined, undefined, undefined, undefined, undefined]);
  });
});
