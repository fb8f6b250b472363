/**
 * Telegram Bot API stand-in (protocols.md section 4): `/bot<token>/<method>` with JSON, urlencoded or multipart
 * parameters; answers `{ok:true,result}` or `{ok:false,error_code,description,parameters?}` with the HTTP status
 * equal to `error_code`. Flood control answers 429 with `parameters.retry_after`.
 */
import { imageSize } from 'image-size';
import { StandIn, StandInReply, type RecordedRequest, type StandInResponse } from './kit';

interface TelegramStoredMessage {
  message_id: number;
  date: number;
  chat: { id: number; type: string; title?: string; username?: string };
  text?: string;
  caption?: string;
  kind: 'text' | 'photo' | 'video' | 'animation';
  file?: { name: string; mimeType: string; size: number };
  media_group_id?: string;
  deleted: boolean;
}

interface Chat {
  id: number;
  type: 'channel' | 'group' | 'supergroup' | 'private';
  title: string;
  username?: string;
  /** Bot memberships (ChatMember); absent = not a member (403 on posting). */
  members: Map<number, ChatMember>;
  nextMessageId: number;
}

interface ChatMember {
  status: 'creator' | 'administrator' | 'member' | 'restricted' | 'left' | 'kicked';
  can_post_messages?: boolean;
  can_delete_messages?: boolean;
}

const POSTING_ADMIN: ChatMember = { status: 'administrator', can_post_messages: true, can_delete_messages: true };

const TEXT_MAX = 4096;
const CAPTION_MAX = 1024;
/** sendPhoto: "The photo's width and height must not exceed 10000 in total. Width and height ratio must be at most 20." */
const PHOTO_MAX_SIDES_SUM = 10_000;
const PHOTO_MAX_RATIO = 20;
const DELETE_WINDOW_S = 48 * 3600;

function fail(code: number, description: string, parameters?: Record<string, unknown>): never {
  throw new StandInReply({ status: code, json: { ok: false, error_code: code, description, ...(parameters ? { parameters } : {}) } });
}

function ok(result: unknown): StandInResponse {
  return { status: 200, json: { ok: true, result } };
}

export async function startTelegramStandIn() {
  const standIn = new StandIn('telegram');
  const bots = new Map<string, { id: number; username: string; first_name: string }>();
  const chats = new Map<number, Chat>();
  const messages: TelegramStoredMessage[] = [];
  let clockMs: number | null = null;
  const nowS = () => Math.floor((clockMs ?? Date.now()) / 1000);
  let nextChatId = -1001000000001;
  let nextGroup = 1;

  function addBot(token: string, username = 'herald_test_bot'): { id: number; username: string } {
    const bot = { id: 7000000000 + bots.size + 1, username, first_name: 'Herald Test' };
    bots.set(token, bot);
    return bot;
  }

  function addChat(opts: { username?: string; title?: string; type?: Chat['type']; botIds?: number[] }): Chat {
    const chat: Chat = {
      id: nextChatId--,
      type: opts.type ?? 'channel',
      title: opts.title ?? 'Herald channel',
      username: opts.username,
      members: new Map((opts.botIds ?? [...bots.values()].map((b) => b.id)).map((id) => [id, { ...POSTING_ADMIN }])),
      nextMessageId: 1,
    };
    chats.set(chat.id, chat);
    return chat;
  }

  function params(req: RecordedRequest): Record<string, any> {
    return { ...req.query, ...(req.form ?? {}), ...(req.json ?? {}) };
  }

  function findChat(raw: unknown): Chat | undefined {
    const key = String(raw ?? '');
    if (key.startsWith('@')) return [...chats.values()].find((c) => c.username === key.slice(1));
    return chats.get(Number(key));
  }

  function postableChat(raw: unknown, botId: number): Chat {
    const chat = findChat(raw);
    if (!chat) fail(400, 'Bad Request: chat not found');
    const member = chat.members.get(botId);
    if (!member || member.status === 'left' || member.status === 'kicked') fail(403, `Forbidden: bot is not a member of the ${chat.type === 'channel' ? 'channel' : 'group'} chat`);
    if (chat.type === 'channel' && !(member.status === 'creator' || member.can_post_messages)) fail(400, 'Bad Request: need administrator rights in the channel chat');
    return chat;
  }

  function chatShape(chat: Chat) {
    return { id: chat.id, type: chat.type, title: chat.title, ...(chat.username ? { username: chat.username } : {}) };
  }

  function store(chat: Chat, fields: Partial<TelegramStoredMessage> & { kind: TelegramStoredMessage['kind'] }): TelegramStoredMessage {
    const message: TelegramStoredMessage = { message_id: chat.nextMessageId++, date: nowS(), chat: chatShape(chat), deleted: false, ...fields };
    messages.push(message);
    return message;
  }

  function publicMessage(m: TelegramStoredMessage) {
    const { kind, file, deleted, ...rest } = m;
    const media = kind === 'text' ? {} : { [kind]: kind === 'photo' ? [{ file_id: `f${m.message_id}`, width: 1, height: 1 }] : { file_id: `f${m.message_id}` } };
    return { ...rest, sender_chat: m.chat, ...media };
  }

  function checkCaption(caption: unknown): string | undefined {
    if (caption === undefined || caption === '') return undefined;
    if (String(caption).length > CAPTION_MAX) fail(400, 'Bad Request: message caption is too long');
    return String(caption);
  }

  function fileOf(req: RecordedRequest, field: string) {
    const part = req.multipart?.find((p) => p.name === field && p.file);
    return part?.file ? { name: part.file.filename, mimeType: part.file.mimeType, size: part.file.data.length } : undefined;
  }

  /** A photo whose picture size Telegram refuses answers 400 PHOTO_INVALID_DIMENSIONS; unreadable bytes are not judged here. */
  function checkPhotoDimensions(req: RecordedRequest, field: string): void {
    const data = req.multipart?.find((p) => p.name === field && p.file)?.file?.data;
    if (!data) return;
    let size: { width?: number; height?: number };
    try {
      size = imageSize(data);
    } catch {
      return;
    }
    const { width, height } = size;
    if (!width || !height) return;
    if (width + height > PHOTO_MAX_SIDES_SUM || Math.max(width, height) > PHOTO_MAX_RATIO * Math.min(width, height)) {
      fail(400, 'Bad Request: PHOTO_INVALID_DIMENSIONS');
    }
  }

  function deleteOne(chat: Chat, id: number): 'deleted' | 'missing' | 'too_old' {
    const m = messages.find((x) => x.chat.id === chat.id && x.message_id === id && !x.deleted);
    if (!m) return 'missing';
    if (nowS() - m.date > DELETE_WINDOW_S) return 'too_old';
    m.deleted = true;
    return 'deleted';
  }

  const methods: Record<string, (req: RecordedRequest, bot: { id: number; username: string; first_name: string }) => StandInResponse> = {
    getMe: (_req, bot) => ok({ id: bot.id, is_bot: true, first_name: bot.first_name, username: bot.username, can_join_groups: true }),
    getChat: (req) => {
      const chat = findChat(params(req).chat_id);
      if (!chat) fail(400, 'Bad Request: chat not found');
      return ok(chatShape(chat));
    },
    getChatMember: (req) => {
      const p = params(req);
      const chat = findChat(p.chat_id);
      if (!chat) fail(400, 'Bad Request: chat not found');
      const userId = Number(p.user_id);
      const bot = [...bots.values()].find((b) => b.id === userId);
      if (!bot) fail(400, 'Bad Request: user not found');
      const member = chat.members.get(userId) ?? { status: 'left' };
      return ok({ user: { id: bot.id, is_bot: true, first_name: bot.first_name, username: bot.username }, ...member });
    },
    sendMessage: (req, bot) => {
      const p = params(req);
      const chat = postableChat(p.chat_id, bot.id);
      const text = String(p.text ?? '');
      if (!text.trim()) fail(400, 'Bad Request: message text is empty');
      if (text.length > TEXT_MAX) fail(400, 'Bad Request: message is too long');
      return ok(publicMessage(store(chat, { kind: 'text', text })));
    },
    sendPhoto: (req, bot) => sendFile(req, bot, 'photo'),
    sendVideo: (req, bot) => sendFile(req, bot, 'video'),
    sendAnimation: (req, bot) => sendFile(req, bot, 'animation'),
    sendMediaGroup: (req, bot) => {
      const p = params(req);
      const chat = postableChat(p.chat_id, bot.id);
      let items: Array<{ type: string; media: string; caption?: string }>;
      try {
        items = JSON.parse(String(p.media));
      } catch {
        fail(400, "Bad Request: can't parse media JSON object");
      }
      if (!Array.isArray(items) || items.length < 2 || items.length > 10) fail(400, 'Bad Request: wrong number of media in the group');
      const files = items.map((item) => {
        const name = String(item.media).replace(/^attach:\/\//, '');
        const file = fileOf(req, name);
        if (!file) fail(400, 'Bad Request: wrong file identifier/HTTP URL specified');
        if (item.type === 'photo') checkPhotoDimensions(req, name);
        return { file, caption: checkCaption(item.caption), kind: item.type === 'video' ? ('video' as const) : ('photo' as const) };
      });
      const group = String(nextGroup++);
      return ok(files.map((f) => publicMessage(store(chat, { kind: f.kind, file: f.file, caption: f.caption, media_group_id: group }))));
    },
    deleteMessage: (req, bot) => {
      const p = params(req);
      const chat = postableChat(p.chat_id, bot.id);
      const outcome = deleteOne(chat, Number(p.message_id));
      if (outcome === 'missing') fail(400, 'Bad Request: message to delete not found');
      if (outcome === 'too_old') fail(400, "Bad Request: message can't be deleted");
      return ok(true);
    },
    // Missing ids are skipped (protocols.md); too-old ones stay.
    deleteMessages: (req, bot) => {
      const p = params(req);
      const chat = postableChat(p.chat_id, bot.id);
      const ids: number[] = typeof p.message_ids === 'string' ? JSON.parse(p.message_ids) : p.message_ids;
      if (!Array.isArray(ids) || ids.length < 1 || ids.length > 100) fail(400, 'Bad Request: message identifiers are not specified');
      const outcomes = ids.map((id) => deleteOne(chat, Number(id)));
      if (outcomes.every((o) => o === 'too_old')) fail(400, "Bad Request: message can't be deleted");
      return ok(true);
    },
  };

  function sendFile(req: RecordedRequest, bot: { id: number }, field: 'photo' | 'video' | 'animation'): StandInResponse {
    const p = params(req);
    const chat = postableChat(p.chat_id, bot.id);
    const caption = checkCaption(p.caption);
    const file = fileOf(req, field);
    if (!file) fail(400, `Bad Request: there is no ${field} in the request`);
    if (field === 'photo') checkPhotoDimensions(req, field);
    return ok(publicMessage(store(chat, { kind: field, file, caption })));
  }

  const handle = (req: RecordedRequest): StandInResponse => {
    const token = req.params.bot.startsWith('bot') ? req.params.bot.slice(3) : '';
    const bot = bots.get(token);
    if (!bot) fail(401, 'Unauthorized');
    const method = methods[req.params.method];
    if (!method) fail(404, 'Not Found');
    return method(req, bot);
  };
  standIn.on('POST', '/:bot/:method', handle).on('GET', '/:bot/:method', handle);
  const origin = await standIn.start();

  return {
    standIn,
    origin,
    addBot,
    addChat,
    /** Messages in a chat, deleted ones included (flagged). */
    messages: (chatId?: number) => messages.filter((m) => chatId === undefined || m.chat.id === chatId),
    /** Pin the stand-in's clock (ms since epoch); null returns to real time. */
    setNow: (ms: number | null) => {
      clockMs = ms;
    },
    removeBotFromChat: (chatId: number, botId: number) => chats.get(chatId)?.members.delete(botId),
    setBotMember: (chatId: number, botId: number, member: ChatMember) => chats.get(chatId)?.members.set(botId, member),
    /** The next `times` calls of `method` meet flood control with this wait. */
    floodWait: (method: string, retryAfter: number, times = 1) =>
      standIn.inject(
        { path: new RegExp(`/${method}$`) },
        {
          kind: 'reply',
          response: { status: 429, json: { ok: false, error_code: 429, description: `Too Many Requests: retry after ${retryAfter}`, parameters: { retry_after: retryAfter } } },
        },
        times,
      ),
    stop: () => standIn.stop(),
  };
}

export type TelegramStandIn = Awaited<ReturnType<typeof startTelegramStandIn>>;
