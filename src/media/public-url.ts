import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { isMediaId } from './store';

/**
 * Public URLs for stored media, for the platforms that fetch media by URL themselves (the Graph APIs of instagram,
 * facebook and threads). A URL is unguessable and short-lived: `<base>/media/<id>?exp=<unix seconds>&sig=<HMAC>`,
 * the HMAC-SHA256 of id and expiry under a key only Herald holds. Anyone with the URL can fetch the file until it
 * expires, which is exactly what the platform needs and nothing more.
 */

export interface MediaUrlSigner {
  /** The full public URL of stored media `id`, valid until `expiresAt`. */
  signMediaUrl(id: string, expiresAt: Date): string;
  /** True when `exp` and `sig` (as they came in the query) are a valid, unexpired signature for `id`. */
  verifyMediaUrlSignature(id: string, exp: unknown, sig: unknown, now?: Date): boolean;
}

interface MediaUrlSignerOptions {
  /** HERALD_PUBLIC_URL: the origin (and optional path prefix) the platforms reach Herald at. */
  publicBaseUrl: string;
  /** At least 32 bytes; see `deriveMediaUrlKey`. */
  key: Buffer;
}

/** A key for media URLs derived from Herald's master key, so no second secret has to be configured. */
export function deriveMediaUrlKey(masterKey: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'herald media url v1', 32));
}

export const DEFAULT_MEDIA_URL_TTL_MS = 60 * 60 * 1000;

export function createMediaUrlSigner(options: MediaUrlSignerOptions): MediaUrlSigner {
  if (options.key.length < 32) throw new Error('The media URL key must be at least 32 bytes');
  const base = options.publicBaseUrl.replace(/\/+$/, '');
  const mac = (id: string, exp: number) => createHmac('sha256', options.key).update(`herald-media-v1\n${id.toLowerCase()}\n${exp}`).digest();

  return {
    signMediaUrl(id, expiresAt) {
      if (!isMediaId(id)) throw new Error(`Not a media id: ${id}`);
      const exp = Math.floor(expiresAt.getTime() / 1000);
      return `${base}/media/${id.toLowerCase()}?exp=${exp}&sig=${mac(id, exp).toString('base64url')}`;
    },

    verifyMediaUrlSignature(id, exp, sig, now = new Date()) {
      if (typeof exp !== 'string' || typeof sig !== 'string' || !isMediaId(id)) return false;
      if (!/^\d{1,12}$/.test(exp) || !/^[A-Za-z0-9_-]{43}$/.test(sig)) return false;
      const expiry = Number(exp);
      if (expiry * 1000 <= now.getTime()) return false;
      return timingSafeEqual(Buffer.from(sig, 'base64url'), mac(id, expiry));
    },
  };
}
