import { assertFetchableUrl, BlockedAddressError } from '../net/address-guard';
import { urlRefused } from './errors';
import { MAX_MEDIA_URL_LENGTH } from './limits';
import type { MediaFormat, MediaKind } from './sniff';

/**
 * The check on a media URL before anything is downloaded (publishing-api.md "Media rules" 2): it must be an http(s)
 * URL the fetch guard allows. When its path names a publishable file type, that is returned as a hint. Refusing a
 * type per platform from the extension (a `.mp4` for an images-only platform, a `.heic`) is the post rules' job
 * (`src/posts/rules/media.ts`), worded for the platform; in the end the bytes decide.
 */

interface MediaUrlHint {
  format: MediaFormat;
  kind: MediaKind;
}

interface CheckedMediaUrl {
  url: URL;
  hint: MediaUrlHint | null;
}

const extensionFormats: Readonly<Record<string, MediaFormat>> = {
  jpg: 'jpeg', jpeg: 'jpeg', jpe: 'jpeg', jfif: 'jpeg', png: 'png', gif: 'gif', webp: 'webp', mp4: 'mp4', m4v: 'mp4', mov: 'mov', qt: 'mov',
};

export function checkMediaUrl(raw: string, options: { allowInsecure: boolean }): CheckedMediaUrl {
  if (raw.length > MAX_MEDIA_URL_LENGTH) throw urlRefused(raw, 'invalid_url', `is longer than ${MAX_MEDIA_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw urlRefused(raw, 'invalid_url', 'is not a valid URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw urlRefused(raw, 'invalid_url', 'must be an http(s) URL');
  try {
    assertFetchableUrl(url, options.allowInsecure);
  } catch (err) {
    if (err instanceof BlockedAddressError) throw urlRefused(raw, 'blocked_url', `is not allowed: ${err.message}`);
    throw err;
  }
  const extension = extensionOf(url);
  const format = extension ? extensionFormats[extension] : undefined;
  return { url, hint: format ? { format, kind: format === 'mp4' || format === 'mov' ? 'video' : 'image' } : null };
}

function extensionOf(url: URL): string | null {
  const last = decodeURIComponentSafe(url.pathname.split('/').pop() ?? '');
  const dot = last.lastIndexOf('.');
  if (dot <= 0 || dot === last.length - 1) return null;
  return last.slice(dot + 1).toLowerCase();
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
