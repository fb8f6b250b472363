import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { PlatformComment } from '../types';

/** Mastodon entities Herald reads (protocols.md section 3). */
interface MastodonAccount {
  id: string;
  username: string;
  acct: string;
  display_name: string;
  url: string;
  avatar?: string;
}

/**
 * What `verify` reads of `GET /api/v1/accounts/verify_credentials`. The server is the user's choice: a host that is not
 * a Mastodon server may answer 200 with anything.
 */
export const verifiedAccountAnswer = z.object({
  id: z.string().min(1),
  username: z.string().min(1),
  display_name: z.string().nullish(),
  url: z.string().nullish(),
});

export interface MastodonStatus {
  id: string;
  url: string | null;
  created_at: string;
  content: string;
  in_reply_to_id: string | null;
  account: MastodonAccount;
  replies_count?: number;
  favourites_count?: number;
}

export interface MastodonMedia {
  id: string;
  type: string;
  url: string | null;
  description: string | null;
}

/** publishing-api.md URL shape `<instance>/@<user>/<id>`. */
export function statusUrl(origin: string, username: string, id: string): string {
  return `${origin}/@${username}/${id}`;
}

/**
 * The key of a post's creates. Mastodon keeps an Idempotency-Key for an hour from the status it made: within it the
 * same Herald post cannot make a second status; past it a repeat would (a retry moved on, a long wait), so an attempt
 * whose earlier call never reported back is not repeated that late (`repeatedCreatesSafeForMs`, `sendMarked`).
 */
export function postIdempotencyKey(postId: string): string {
  return `herald-post-${postId}`;
}

/** Replies to comments have no Herald post id; the same text to the same comment is the same reply. */
export function replyIdempotencyKey(commentId: string, text: string): string {
  return `herald-reply-${createHash('sha256').update(`${commentId}\n${text}`).digest('hex').slice(0, 40)}`;
}

/**
 * A key's generation: Mastodon answers 404 to a key whose status was deleted (protocols.md section 3), so what Herald
 * sends again after deleting it (a thread rolled back, a reply deleted) goes under the next one. The first is the key.
 */
export function keyOfGeneration(key: string, generation: number): string {
  return generation === 0 ? key : `${key}-g${generation}`;
}

const entities: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** Status `content` is HTML; comments are stored as plain text with paragraph and line breaks kept. */
export function htmlToText(html: string): string {
  return html
    .replace(/<\/p>\s*<p[^>]*>/gi, '\n\n')
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<[^>]+>/g, '')
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
      if (name[0] === '#') return String.fromCodePoint(name[1].toLowerCase() === 'x' ? parseInt(name.slice(2), 16) : Number(name.slice(1)));
      return entities[name.toLowerCase()] ?? whole;
    })
    .trim();
}

/** Mastodon ids are time-ordered integers in strings: compare by length, then text. */
export function compareIdsDescending(a: string, b: string): number {
  return b.length - a.length || (b > a ? 1 : b < a ? -1 : 0);
}

export function toComment(status: MastodonStatus, rootId: string, ownAccountId: string | undefined): PlatformComment {
  return {
    platformCommentId: status.id,
    platformParentId: status.in_reply_to_id === rootId ? null : status.in_reply_to_id,
    author: {
      handle: status.account.acct,
      displayName: status.account.display_name || status.account.username,
      platformId: status.account.id,
      avatarUrl: status.account.avatar ?? null,
    },
    text: htmlToText(status.content),
    createdAt: status.created_at,
    likes: status.favourites_count ?? 0,
    replies: status.replies_count ?? 0,
    own: ownAccountId !== undefined && status.account.id === ownAccountId,
  };
}
