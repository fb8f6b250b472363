import { FormData } from '../../net/http';
import { z } from 'zod';
import type { MediaItem } from '../types';

/** Bot API shapes Herald reads (protocols.md section 4); what `verify` reads of `getMe`, `getChat` and `getChatMember` is checked. */
export const botAnswer = z.object({ id: z.number(), username: z.string().optional() });
export const chatAnswer = z.object({
  id: z.number(),
  type: z.enum(['private', 'group', 'supergroup', 'channel']),
  title: z.string().optional(),
  username: z.string().optional(),
  first_name: z.string().optional(),
});
export const chatMemberAnswer = z.object({
  status: z.enum(['creator', 'administrator', 'member', 'restricted', 'left', 'kicked']),
  can_post_messages: z.boolean().optional(),
  can_send_messages: z.boolean().optional(),
});
type TelegramChat = z.output<typeof chatAnswer>;
type TelegramChatMember = z.output<typeof chatMemberAnswer>;

/** A channel takes posts from its creator or an administrator with can_post_messages; a group from any present member. */
export function canPost(chat: TelegramChat, member: TelegramChatMember): boolean {
  if (member.status === 'creator') return true;
  if (chat.type === 'channel') return member.status === 'administrator' && member.can_post_messages === true;
  if (member.status === 'restricted') return member.can_send_messages === true;
  return member.status === 'administrator' || member.status === 'member';
}

export interface TelegramMessage {
  message_id: number;
  date: number;
  chat: TelegramChat;
}

/** A public channel or group has a username; only then is there a t.me link (publishing-api.md URL shapes). */
export function messageUrl(chatUsername: string | undefined, messageId: number | string): string | null {
  return chatUsername ? `https://t.me/${chatUsername}/${messageId}` : null;
}

/** An album is several messages; Herald keeps them as one post id "id1,id2,...", linked by the first. */
export function joinMessageIds(messages: TelegramMessage[]): string {
  return messages.map((m) => m.message_id).join(',');
}

export function splitMessageIds(platformPostId: string): number[] {
  return platformPostId.split(',').map((id) => Number(id));
}

const extensionByMime: Record<string, string> = {
  'image/jpeg': 'jpg',
  'image/png': 'png',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'video/mp4': 'mp4',
};

function fileName(base: string, item: MediaItem): string {
  return `${base}.${extensionByMime[item.mimeType] ?? 'bin'}`;
}

function blobOf(item: MediaItem): Blob {
  return new Blob([new Uint8Array(item.data)], { type: item.mimeType });
}

/** Which single-file method and field carry one media item. A GIF goes as an animation so it keeps moving. */
function singleMethod(item: MediaItem): { method: string; field: string } {
  if (item.kind === 'video') return { method: 'sendVideo', field: 'video' };
  if (item.mimeType === 'image/gif') return { method: 'sendAnimation', field: 'animation' };
  return { method: 'sendPhoto', field: 'photo' };
}

type SendPlan = { method: string; body: { json: Record<string, unknown> } | { multipart: FormData } };

/** Text alone → sendMessage; one file → sendPhoto/sendVideo/sendAnimation; 2-10 files → sendMediaGroup. */
export function planSend(chatId: string, text: string, media: MediaItem[]): SendPlan {
  if (media.length === 0) return { method: 'sendMessage', body: { json: { chat_id: chatId, text } } };
  const form = new FormData();
  form.append('chat_id', chatId);
  if (media.length === 1) {
    const { method, field } = singleMethod(media[0]);
    if (text) form.append('caption', text);
    form.append(field, blobOf(media[0]), fileName(field, media[0]));
    return { method, body: { multipart: form } };
  }
  const items = media.map((item, i) => ({
    type: item.kind === 'video' ? 'video' : 'photo',
    media: `attach://file${i}`,
    // The caption rides on the first item; Telegram shows it for the whole album.
    ...(i === 0 && text ? { caption: text } : {}),
  }));
  form.append('media', JSON.stringify(items));
  media.forEach((item, i) => form.append(`file${i}`, blobOf(item), fileName(`file${i}`, item)));
  return { method: 'sendMediaGroup', body: { multipart: form } };
}
