import { type HttpClient, type HttpResponse, ResponseTooLargeError, TransportError } from '../net/http';
import { formatBytes, formatSeconds, mediaUnsupported, urlRefused } from './errors';
import { mediaLimits, requireWithinLimits } from './limits';
import { requireDecodable, type MediaFacts } from './sniff';

/**
 * Fetches a client's media URL safely: only through the guarded client (which refuses private and loopback
 * addresses at connect time), following at most `maxRedirects` redirects by hand so every hop is checked again,
 * with one deadline for the whole chain and the byte cap enforced from Content-Length and while streaming.
 * Every failure is a `MediaError`: 400 `bad_request` naming the URL when it cannot be fetched, 400
 * `unsupported_media` when what came back is too big or not publishable media.
 */

interface DownloadOptions {
  http: HttpClient;
  /** Defaults to the largest file any platform accepts. */
  maxBytes?: number;
  /** Whose limit `maxBytes` is, for the refusal ("the largest file Mastodon accepts"); Herald's own by default. */
  maxBytesOf?: string;
  /** For the whole redirect chain. */
  timeoutMs?: number;
  maxRedirects?: number;
}

interface DownloadedMedia {
  bytes: Buffer;
  facts: MediaFacts;
  /** Where the bytes finally came from (after redirects). */
  finalUrl: string;
}

/** For the whole chain: long enough for a large video from a slow host, short enough not to hold a request forever. */
const DEFAULT_DOWNLOAD_TIMEOUT_MS = 120_000;
const DEFAULT_MAX_REDIRECTS = 3;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

export async function downloadMedia(url: string, options: DownloadOptions): Promise<DownloadedMedia> {
  const maxBytes = options.maxBytes ?? mediaLimits.maxBytes;
  const timeoutMs = options.timeoutMs ?? DEFAULT_DOWNLOAD_TIMEOUT_MS;
  const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  const deadline = Date.now() + timeoutMs;
  let current: URL;
  try {
    current = new URL(url);
  } catch {
    throw urlRefused(url, 'invalid_url', 'is not a valid URL');
  }

  for (let hop = 0; ; hop++) {
    const response = await fetchHop(url, current, hop, { http: options.http, maxBytes, maxBytesOf: options.maxBytesOf ?? 'the most Herald accepts', deadline, timeoutMs });
    if (REDIRECT_STATUSES.has(response.status)) {
      const location = response.headers.get('location');
      if (!location) throw urlRefused(url, 'http_status', `answered HTTP ${response.status} without a Location`);
      if (hop >= maxRedirects) throw urlRefused(url, 'too_many_redirects', `redirects more than ${maxRedirects} times`);
      try {
        current = new URL(location, current);
      } catch {
        throw urlRefused(url, 'http_status', 'redirects to an invalid URL');
      }
      continue;
    }
    if (response.status < 200 || response.status > 299) throw urlRefused(url, 'http_status', `answered HTTP ${response.status}`);
    const facts = requireWithinLimits(requireDecodable(response.bytes, url), url);
    return { bytes: response.bytes, facts, finalUrl: current.toString() };
  }
}

async function fetchHop(
  original: string,
  target: URL,
  hop: number,
  ctx: { http: HttpClient; maxBytes: number; maxBytesOf: string; deadline: number; timeoutMs: number },
): Promise<HttpResponse> {
  const remaining = ctx.deadline - Date.now();
  if (remaining <= 0) throw timedOut(original, ctx.timeoutMs);
  const via = hop === 0 ? '' : ` (redirected to ${target.origin})`;
  try {
    return await ctx.http.request({
      url: target,
      timeoutMs: remaining,
      maxBytes: ctx.maxBytes,
      headers: { accept: 'image/*, video/*;q=0.9, */*;q=0.1' },
    });
  } catch (err) {
    if (err instanceof ResponseTooLargeError) {
      throw mediaUnsupported(`Media is too large: it exceeds ${formatBytes(ctx.maxBytes)}, ${ctx.maxBytesOf}`, 'too_large', original);
    }
    if (err instanceof TransportError && err.blocked) throw urlRefused(original, 'blocked_url', `is not allowed${via}: ${err.message}`);
    if (err instanceof TransportError && (err.message === 'request timed out' || Date.now() >= ctx.deadline)) throw timedOut(original, ctx.timeoutMs);
    if (err instanceof TransportError) throw urlRefused(original, 'unreachable', `could not be reached${via}`);
    throw err;
  }
}

function timedOut(url: string, timeoutMs: number) {
  return urlRefused(url, 'timeout', `did not finish downloading within ${formatSeconds(timeoutMs)}`);
}
