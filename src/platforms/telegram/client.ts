import type { FormData, HttpClient } from '../../net/http';
import { classifyCreateFailure, classifyTransportFailure } from '../transport';
import { resultOf, telegramTransport } from './errors';

export const TELEGRAM_DEFAULT_ORIGIN = 'https://api.telegram.org';

type TelegramBody = { json: Record<string, unknown> } | { multipart: FormData };

interface TelegramClient {
  /** Calls one Bot API method; `isCreate` marks sends whose lost answer or server error must not be repeated blindly. */
  call<T>(botToken: string, method: string, body: TelegramBody, isCreate?: boolean): Promise<T>;
}

/** The token is part of the path (`/bot<token>/<method>`), as the Bot API requires. */
export function createTelegramClient(http: HttpClient, origin: string): TelegramClient {
  const base = origin.replace(/\/+$/, '');
  return {
    async call<T>(botToken: string, method: string, body: TelegramBody, isCreate = false): Promise<T> {
      const url = `${base}/bot${botToken}/${method}`;
      let res;
      try {
        res = await http.request({ method: 'POST', url, ...body });
      } catch (err) {
        throw classifyTransportFailure(telegramTransport, err, isCreate ? 'creates' : 'other');
      }
      try {
        return resultOf<T>(res);
      } catch (err) {
        throw isCreate ? classifyCreateFailure(telegramTransport, err) : err;
      }
    },
  };
}
