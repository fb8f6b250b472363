import { ApiError, type ErrorCode } from '../errors';

/**
 * Why Herald refused a piece of media. The posts layer and the upload route need no mapping of their own: every
 * refusal is an `ApiError` with the contract's code (`bad_request` for a URL that cannot be fetched,
 * `unsupported_media` for bytes no platform takes, `media_not_found`, `media_storage_failed`, `usage_limit_exceeded`
 * for uploads over the plan's storage), and `reason` says
 * which case it was for logs and for draft warnings.
 */
type MediaRefusalReason =
  | 'invalid_url'
  | 'blocked_url'
  | 'unreachable'
  | 'timeout'
  | 'http_status'
  | 'too_many_redirects'
  | 'too_large'
  | 'undecodable'
  | 'not_found'
  | 'storage_failed'
  | 'storage_full';

class MediaError extends ApiError {
  constructor(
    code: ErrorCode,
    message: string,
    readonly reason: MediaRefusalReason,
    /** The URL the client gave, when the refusal is about one. */
    readonly url?: string,
  ) {
    super(code, message);
    this.name = 'MediaError';
  }
}

/**
 * A refusal of a URL the client gave (fetch, guard, status, size, type), as opposed to the store's: the caller that
 * walked the request's media list knows which field held the URL and names it (`media_urls[1]: Media URL ...`).
 */
export function isUrlRefusal(err: unknown): err is MediaError {
  return err instanceof MediaError && err.url !== undefined;
}

/** URLs are echoed back to their owner, shortened so a hostile 8 KB URL does not fill the message. */
function describeUrl(url: string | URL): string {
  const text = String(url);
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}

/** A URL Herald will not or could not fetch: 400 `bad_request` naming the URL. */
export function urlRefused(url: string | URL, reason: MediaRefusalReason, why: string): MediaError {
  return new MediaError('bad_request', `Media URL ${describeUrl(url)} ${why}`, reason, String(url));
}

/** Bytes no platform can take (undecodable, too big): 400 `unsupported_media`. */
export function mediaUnsupported(message: string, reason: 'too_large' | 'undecodable', url?: string | URL): MediaError {
  const where = url === undefined ? '' : ` (${describeUrl(url)})`;
  return new MediaError('unsupported_media', `${message}${where}`, reason, url === undefined ? undefined : String(url));
}

export function mediaNotFound(id: string): MediaError {
  return new MediaError('media_not_found', `Media ${describeUrl(id)} was not found`, 'not_found');
}

export function mediaStorageFailed(): MediaError {
  return new MediaError('media_storage_failed', 'The media was downloaded but could not be stored; nothing was published or charged. Try again.', 'storage_failed');
}

/**
 * An upload the plan's storage has no room for: 429 `usage_limit_exceeded` (the contract's code for a plan's limit
 * reached; no Retry-After, as nothing frees itself). `size` is null when refused before the file arrived.
 */
export function mediaStorageFull(storage: { planLabel: string; limitBytes: number; usedBytes: number }, size: number | null): MediaError {
  const left = Math.max(0, storage.limitBytes - storage.usedBytes);
  const file = size === null ? 'no room is left for another file' : `this file (${formatBytes(size)}) does not fit in the ${formatBytes(left)} left`;
  return new MediaError(
    'usage_limit_exceeded',
    `Media storage full: your uploads take ${formatBytes(storage.usedBytes)} of ${storage.planLabel}'s ${formatBytes(storage.limitBytes)}, and ${file}. ` +
      'Delete uploads you no longer need (GET /api/v1/media lists them; DELETE /api/v1/media/:id removes one). Nothing was stored.',
    'storage_full',
  );
}

/** Human sizes for messages: "5 MB", "977 KB" (decimal units, as the media rules table writes them). */
export function formatBytes(bytes: number): string {
  if (bytes >= 1_000_000_000) return `${+(bytes / 1_000_000_000).toFixed(1)} GB`;
  if (bytes >= 1_000_000) return `${+(bytes / 1_000_000).toFixed(1)} MB`;
  if (bytes >= 1_000) return `${+(bytes / 1_000).toFixed(1)} KB`;
  return `${bytes} bytes`;
}

/** "1 second", "90 seconds" (at least one). */
export function formatSeconds(ms: number): string {
  const seconds = Math.max(1, Math.round(ms / 1000));
  return `${seconds} second${seconds === 1 ? '' : 's'}`;
}
