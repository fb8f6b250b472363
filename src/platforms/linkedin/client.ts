import type { HttpClient, HttpResponse } from '../../net/http';
import { classifyCreateFailure, classifyTransportFailure } from '../transport';
import { classifyLinkedInResponse, isLinkedInSuccess, linkedInTransport, type LinkedInAction } from './errors';

/**
 * HTTP for LinkedIn's REST API: bearer token, `LinkedIn-Version` and `X-Restli-Protocol-Version: 2.0.0` on every
 * call, URNs encoded in paths, every answer classified by `errors.ts`.
 */

/** The Posts/Images/Comments API version Herald speaks (versions sunset after about a year). */
const LINKEDIN_VERSION = '202605';

interface LinkedInRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** A path on the origin, or an absolute URL LinkedIn handed back (the image `uploadUrl`), used verbatim. */
  path?: string;
  url?: string;
  query?: Record<string, string | number | undefined>;
  json?: unknown;
  body?: Buffer;
  headers?: Record<string, string>;
  action: LinkedInAction;
  /** The call makes something visible, so a lost answer is an unknown outcome rather than a retry. */
  creates?: boolean;
  /** The caller giving up on the call (`HttpRequest.signal`). */
  signal?: AbortSignal;
}

export interface LinkedInClient {
  send(req: LinkedInRequest): Promise<HttpResponse>;
}

/** Rest.li wants URNs in paths fully encoded, parentheses and commas included. */
export function encodeUrn(urn: string): string {
  return encodeURIComponent(urn).replace(/\(/g, '%28').replace(/\)/g, '%29');
}

export function createLinkedInClient(opts: { http: HttpClient; origin: string; accessToken: string; version?: string; now: () => Date }): LinkedInClient {
  const base = opts.origin.replace(/\/+$/, '');
  return {
    async send(req) {
      const headers = {
        authorization: `Bearer ${opts.accessToken}`,
        'linkedin-version': opts.version ?? LINKEDIN_VERSION,
        'x-restli-protocol-version': '2.0.0',
        ...req.headers,
      };
      let res: HttpResponse;
      try {
        res = await opts.http.request({ method: req.method, url: req.url ?? base + req.path, query: req.query, json: req.json, body: req.body, headers, signal: req.signal });
      } catch (err) {
        throw classifyTransportFailure(linkedInTransport, err, req.creates ? 'creates' : 'other');
      }
      if (isLinkedInSuccess(res)) return res;
      const refusal = classifyLinkedInResponse(res, req.action, opts.now());
      throw req.creates ? classifyCreateFailure(linkedInTransport, refusal) : refusal;
    },
  };
}
