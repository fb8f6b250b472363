import type { HttpClient, HttpRequest } from '../../net/http';

/**
 * A WHATWG `fetch` for `@atproto/api` built on Herald's HTTP client, so the library's traffic gets the same address
 * guard, timeouts and `TransportError`s as every other adapter. The library wraps a thrown `TransportError` in an
 * `XRPCError` whose `cause` is that error (see `errors.ts`).
 */

const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

export function fetchVia(http: HttpClient): typeof globalThis.fetch {
  return async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const headers: Record<string, string> = {};
    request.headers.forEach((value, key) => (headers[key] = value));
    const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
    const res = await http.request({
      method: request.method.toUpperCase() as HttpRequest['method'],
      url: request.url,
      headers,
      body,
      // A call's `signal` option, which the library hands on inside its Request: a read given up on ends its call.
      signal: request.signal,
    });
    const responseHeaders: [string, string][] = [];
    res.headers.forEach((value, key) => responseHeaders.push([key, value]));
    return new Response(NULL_BODY_STATUSES.has(res.status) ? null : res.bytes, { status: res.status, headers: responseHeaders });
  };
}
