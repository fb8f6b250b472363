import type { HttpResponse } from '../../net/http';
import type { TransportPolicy } from '../transport';
import { PlatformFailure, type PlatformFailureKind } from '../types';

/**
 * Every Bot API answer is classified here, once. Telegram's HTTP status equals `error_code`; the `description`
 * is the only finer signal it gives, so the rows that need it are keyed by the exact description string
 * (protocols.md section 4), never by substring.
 */

interface Row {
  kind: PlatformFailureKind;
  message: string;
}

const byDescription: Record<string, Row> = {
  'Bad Request: message to delete not found': { kind: 'gone', message: 'Telegram no longer has this message.' },
  "Bad Request: message can't be deleted": {
    kind: 'permanent',
    message: 'Telegram refused to delete the message: it is older than 48 hours or the bot may not delete it.',
  },
  'Bad Request: chat not found': {
    kind: 'reauthorize',
    message: 'Telegram cannot find the chat; check the chat id and reconnect the account.',
  },
  // Sent with parameters.migrate_to_chat_id: the group has a new id, which a reconnect picks up.
  'Bad Request: group chat was upgraded to a supergroup chat': {
    kind: 'reauthorize',
    message: 'Telegram says the group became a supergroup with a new id; reconnect the account.',
  },
  'Bad Request: message is too long': { kind: 'permanent', message: 'Telegram refused the post: the text is too long.' },
  'Bad Request: message caption is too long': { kind: 'permanent', message: 'Telegram refused the post: the caption is too long.' },
  'Bad Request: message text is empty': { kind: 'permanent', message: 'Telegram refused the post: the text is empty.' },
  'Bad Request: PHOTO_INVALID_DIMENSIONS': {
    kind: 'permanent',
    message: 'Telegram refused the post: a photo is too large or too narrow (width and height at most 10,000 pixels together, sides at most 20:1).',
  },
};

const byErrorCode: Record<number, Row> = {
  400: { kind: 'permanent', message: 'Telegram refused the request as invalid.' },
  401: { kind: 'reauthorize', message: 'Telegram no longer accepts this bot token; reconnect the account.' },
  403: {
    kind: 'reauthorize',
    message: 'Telegram refused: the bot may no longer post in this chat; make it an administrator again and reconnect.',
  },
  // The Bot API answers 404 for a token it cannot even parse.
  404: { kind: 'reauthorize', message: 'Telegram does not recognise this bot token; reconnect the account.' },
  409: { kind: 'permanent', message: 'Telegram refused the request because of a conflicting bot setup.' },
  429: { kind: 'rate_limited', message: 'Telegram is rate limiting this bot; try again later.' },
};

const serverError: Row = { kind: 'retryable', message: 'Telegram is having trouble; try again later.' };
const unexpected: Row = { kind: 'permanent', message: 'Telegram gave an unexpected answer.' };

interface BotApiError {
  ok: false;
  error_code?: number;
  description?: string;
  parameters?: { retry_after?: number; migrate_to_chat_id?: number };
}

/** Returns `result` of a successful answer; throws the classified `PlatformFailure` otherwise. */
export function resultOf<T>(res: HttpResponse): T {
  const body = res.json as { ok?: boolean; result?: T } | undefined;
  if (res.status === 200 && body?.ok === true) return body.result as T;
  const error = (body ?? {}) as BotApiError;
  const code = typeof error.error_code === 'number' ? error.error_code : res.status;
  const row =
    (error.description !== undefined ? byDescription[error.description] : undefined) ??
    byErrorCode[code] ??
    (code >= 500 ? serverError : unexpected);
  const retryAfter = row.kind === 'rate_limited' ? (error.parameters?.retry_after ?? undefined) : undefined;
  throw new PlatformFailure('telegram', row.kind, row.message, retryAfter, { status: res.status, body: res.text.slice(0, 500) });
}

/**
 * A message send is not idempotent on Telegram and there is no history to look in, so a send that may have reached
 * Telegram is reported as `unknown_outcome`, never repeated.
 */
export const telegramTransport: TransportPolicy = {
  platform: 'telegram',
  safeToRepeat: { creates: false, other: true },
  messages: {
    blocked: 'The Telegram Bot API address is refused: it is not a public https address.',
    notSent: 'Telegram could not be reached; nothing was sent.',
    lostRepeatable: 'Telegram did not answer in time; try again.',
    mayHaveTakenEffect: 'Telegram did not answer in time; the message may or may not have been posted.',
  },
};
