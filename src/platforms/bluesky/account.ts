import net from 'node:net';
import { isPublicAddress } from '../../net/address-guard';

/** Pure checks the accounts API runs before saving a Bluesky connection (decisions.md "Accounts"). */

export const BLUESKY_DEFAULT_SERVICE = 'https://bsky.social';

const APP_PASSWORD = /^[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}$/;

/** Four groups of four lowercase letters or digits joined by hyphens; otherwise 400 `bluesky_app_password_required`. */
export function isAppPassword(value: unknown): value is string {
  return typeof value === 'string' && APP_PASSWORD.test(value);
}

type ServiceUrlCheck = { ok: true; serviceUrl: string } | { ok: false; message: string };

/**
 * The account's PDS (or entryway) origin. Blank means https://bsky.social; a bare host name means https.
 * Plain http, loopback, private addresses and `localhost` are refused unless `allowInsecure`
 * (HERALD_ALLOW_INSECURE_URLS). Only an origin is kept: a path, query, fragment or credentials are refused.
 */
export function checkServiceUrl(raw: string | undefined | null, allowInsecure: boolean): ServiceUrlCheck {
  const trimmed = (raw ?? '').trim();
  if (!trimmed) return { ok: true, serviceUrl: BLUESKY_DEFAULT_SERVICE };
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) ? trimmed : `https://${trimmed}`);
  } catch {
    return { ok: false, message: 'service_url must be the address of a Bluesky server, like https://bsky.social.' };
  }
  if (url.protocol !== 'https:' && !(allowInsecure && url.protocol === 'http:')) {
    return { ok: false, message: 'service_url must use https.' };
  }
  if (url.username || url.password) return { ok: false, message: 'service_url must not carry credentials.' };
  if ((url.pathname !== '/' && url.pathname !== '') || url.search || url.hash) {
    return { ok: false, message: 'service_url must be a server address only, with no path or query.' };
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const local = host === 'localhost' || host.endsWith('.localhost') || (net.isIP(host) !== 0 && !isPublicAddress(host));
  if (local && !allowInsecure) return { ok: false, message: 'service_url must be a public address.' };
  return { ok: true, serviceUrl: url.origin };
}
