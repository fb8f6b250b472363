import { FormData, type HttpClient, type HttpResponse } from '../../net/http';
import { classifyTransportFailure } from '../transport';
import type { PlatformSlug } from '../types';
import { classifyGraphResponse, graphTransport, isGraphSuccess, type GraphAction } from './errors';

/**
 * HTTP for the three Graph APIs (Facebook, Instagram, Threads): one origin with its version prefix, the access token
 * as the documented `access_token` parameter (query for reads and deletes, form field for writes), every answer
 * classified by `errors.ts`. Methods return the parsed body of a success and throw `PlatformFailure` otherwise.
 */

export interface GraphClient {
  /** `signal`: the caller giving up on the read (`HttpRequest.signal`). */
  get<T>(path: string, query: Record<string, string | number | undefined>, action: GraphAction, signal?: AbortSignal): Promise<T>;
  /** `creates`: the call makes something visible, so a lost answer is an unknown outcome, not a retry. */
  post<T>(path: string, fields: Record<string, string | undefined>, action: GraphAction, opts?: { creates?: boolean; file?: { field: string; data: Buffer; mimeType: string } }): Promise<T>;
  delete<T>(path: string, action: GraphAction): Promise<T>;
}

interface GraphClientOptions {
  http: HttpClient;
  origin: string;
  platform: PlatformSlug;
  accessToken: string;
}

/** `/a/b` from raw ids, each encoded. */
export function graphPath(...segments: string[]): string {
  return '/' + segments.map(encodeURIComponent).join('/');
}

export function createGraphClient(opts: GraphClientOptions): GraphClient {
  const base = opts.origin.replace(/\/+$/, '');
  const transport = graphTransport(opts.platform);

  async function send(action: GraphAction, creates: boolean, run: () => Promise<HttpResponse>): Promise<unknown> {
    let res: HttpResponse;
    try {
      res = await run();
    } catch (err) {
      throw classifyTransportFailure(transport, err, creates ? 'creates' : 'other', action === 'reply' ? 'reply' : 'post');
    }
    if (!isGraphSuccess(res)) throw classifyGraphResponse(opts.platform, res, action, creates);
    return res.json;
  }

  const compact = (fields: Record<string, string | number | undefined>) =>
    Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined).map(([k, v]) => [k, String(v)]));

  return {
    async get<T>(path: string, query: Record<string, string | number | undefined>, action: GraphAction, signal?: AbortSignal) {
      return (await send(action, false, () => opts.http.request({ method: 'GET', url: base + path, query: { ...compact(query), access_token: opts.accessToken }, signal }))) as T;
    },
    async post<T>(path: string, fields: Record<string, string | undefined>, action: GraphAction, extra: { creates?: boolean; file?: { field: string; data: Buffer; mimeType: string } } = {}) {
      const form = { ...compact(fields), access_token: opts.accessToken };
      return (await send(action, extra.creates ?? false, () => {
        if (!extra.file) return opts.http.request({ method: 'POST', url: base + path, form });
        const multipart = new FormData();
        for (const [k, v] of Object.entries(form)) multipart.append(k, v);
        multipart.append(extra.file.field, new Blob([extra.file.data], { type: extra.file.mimeType }), 'upload');
        return opts.http.request({ method: 'POST', url: base + path, multipart });
      })) as T;
    },
    async delete<T>(path: string, action: GraphAction) {
      return (await send(action, false, () => opts.http.request({ method: 'DELETE', url: base + path, query: { access_token: opts.accessToken } }))) as T;
    },
  };
}
