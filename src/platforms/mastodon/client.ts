import type { FormData, HttpClient } from '../../net/http';
import { classifyTransportFailure } from '../transport';
import { failureFor, mastodonTransport, type MastodonScope } from './errors';

interface MastodonRequest {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  json?: unknown;
  multipart?: FormData;
  headers?: Record<string, string>;
  scope?: MastodonScope;
  /** The caller giving up on the call (`HttpRequest.signal`). */
  signal?: AbortSignal;
}

interface MastodonAnswer<T> {
  status: number;
  body: T;
}

export interface MastodonClient {
  /** Resolves for 2xx (the status matters: 202/206 mean "still processing"); throws a classified `PlatformFailure` otherwise. */
  send<T>(origin: string, accessToken: string, req: MastodonRequest): Promise<MastodonAnswer<T>>;
}

export function createMastodonClient(http: HttpClient, now: () => Date): MastodonClient {
  return {
    async send<T>(origin: string, accessToken: string, req: MastodonRequest): Promise<MastodonAnswer<T>> {
      let res;
      try {
        res = await http.request({
          method: req.method,
          url: origin + req.path,
          headers: { authorization: `Bearer ${accessToken}`, ...req.headers },
          json: req.json,
          multipart: req.multipart,
          signal: req.signal,
        });
      } catch (err) {
        throw classifyTransportFailure(mastodonTransport, err, req.method === 'POST' ? 'creates' : 'other');
      }
      if (res.status >= 200 && res.status < 300) return { status: res.status, body: res.json as T };
      throw failureFor(res, req.scope ?? 'default', now().getTime());
    },
  };
}
