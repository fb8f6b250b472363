import type { HttpClient } from '../../net/http';
import { capabilities } from '../capabilities';
import { answerOf, unknownIdentityAnswer } from '../answers';
import { PlatformFailure, type AccountIdentity, type PlatformAdapter, type PlatformContext, type PublishRequest, type PublishedPost } from '../types';
import { createTelegramClient, TELEGRAM_DEFAULT_ORIGIN } from './client';
import { beforeCreate } from '../send-stop';
import {
  botAnswer,
  canPost,
  chatAnswer,
  chatMemberAnswer,
  joinMessageIds,
  messageUrl,
  planSend,
  splitMessageIds,
  type TelegramMessage,
} from './mapper';

interface TelegramAdapterDeps {
  http: HttpClient;
  /** HERALD_TELEGRAM_API_URL; the real Bot API when absent. */
  origin?: string;
  now?: () => Date;
}

const HOUR_MS = 3_600_000;

/**
 * Telegram Bot API adapter. Posts go to one chat (a channel, usually) per account. There is no comment read and no
 * reply chain: thread parts are standalone messages, and `replyTo` is ignored on purpose.
 */
export function createTelegramAdapter(deps: TelegramAdapterDeps): PlatformAdapter {
  const client = createTelegramClient(deps.http, deps.origin ?? TELEGRAM_DEFAULT_ORIGIN);
  const now = deps.now ?? (() => new Date());

  function botToken(ctx: PlatformContext): string {
    const token = ctx.credentials.bot_token;
    if (!token) throw new PlatformFailure('telegram', 'reauthorize', 'Telegram needs a bot token; reconnect the account.');
    return token;
  }

  function chatId(ctx: PlatformContext): string {
    const id = ctx.settings.chat_id ?? ctx.credentials.chat_id;
    if (!id) throw new PlatformFailure('telegram', 'reauthorize', 'Telegram needs a chat id; reconnect the account.');
    return id;
  }

  return {
    platform: 'telegram',

    async verify(ctx): Promise<AccountIdentity> {
      const token = botToken(ctx);
      const refusal = unknownIdentityAnswer('telegram');
      const bot = answerOf('telegram', botAnswer, await client.call<unknown>(token, 'getMe', { json: {} }), refusal);
      const chat = answerOf('telegram', chatAnswer, await client.call<unknown>(token, 'getChat', { json: { chat_id: chatId(ctx) } }), refusal);
      if (chat.type !== 'private') {
        // Connecting a chat the bot cannot post in would only fail later, at the scheduled time.
        const member = answerOf('telegram', chatMemberAnswer, await client.call<unknown>(token, 'getChatMember', { json: { chat_id: chat.id, user_id: bot.id } }), refusal);
        if (!canPost(chat, member)) {
          throw new PlatformFailure(
            'telegram',
            'permanent',
            chat.type === 'channel'
              ? 'Telegram: the bot is not an administrator allowed to post in this channel; give it that right and connect again.'
              : 'Telegram: the bot is not a member allowed to post in this group; add it and connect again.',
          );
        }
      }
      return {
        platformAccountId: String(chat.id),
        username: chat.username ? `@${chat.username}` : (chat.title ?? chat.first_name ?? String(chat.id)),
        displayName: chat.title ?? chat.first_name ?? null,
        profileUrl: chat.username ? `https://t.me/${chat.username}` : null,
        // The numeric id keeps working when a channel is renamed; the username decides whether links exist.
        settings: { chat_id: String(chat.id), chat_username: chat.username ?? '', bot_id: String(bot.id), bot_username: bot.username ?? '' },
      };
    },

    async publish(ctx, req: PublishRequest): Promise<PublishedPost> {
      const plan = planSend(chatId(ctx), req.text, req.media);
      beforeCreate('telegram', req.signal);
      const result = await client.call<TelegramMessage | TelegramMessage[]>(botToken(ctx), plan.method, plan.body, true);
      const messages = Array.isArray(result) ? result : [result];
      return {
        platformPostId: joinMessageIds(messages),
        url: messageUrl(ctx.settings.chat_username || messages[0].chat.username, messages[0].message_id),
      };
    },

    async delete(ctx, platformPostId, publishedAt): Promise<void> {
      const windowHours = capabilities.telegram.deleteWindowHours!;
      if (publishedAt && now().getTime() - publishedAt.getTime() > windowHours * HOUR_MS) {
        throw new PlatformFailure(
          'telegram',
          'permanent',
          `Telegram lets bots delete messages only within ${windowHours} hours of posting; this one is older and stays on Telegram.`,
        );
      }
      const ids = splitMessageIds(platformPostId);
      const call =
        ids.length === 1
          ? client.call<boolean>(botToken(ctx), 'deleteMessage', { json: { chat_id: chatId(ctx), message_id: ids[0] } })
          : client.call<boolean>(botToken(ctx), 'deleteMessages', { json: { chat_id: chatId(ctx), message_ids: ids } });
      try {
        await call;
      } catch (err) {
        if (err instanceof PlatformFailure && err.kind === 'gone') return;
        throw err;
      }
    },

    async resolveUrl(ctx, platformPostId): Promise<string | null> {
      return messageUrl(ctx.settings.chat_username, splitMessageIds(platformPostId)[0]);
    },
  };
}
