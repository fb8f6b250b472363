import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * The single SSRF rule: outside development, Herald only talks to https origins on public unicast addresses.
 * Checked on the URL before connecting and again on every address DNS returns at connect time (no rebinding).
 */

export class BlockedAddressError extends Error {
  readonly code = 'HERALD_BLOCKED_ADDRESS';
  constructor(message: string) {
    super(message);
    this.name = 'BlockedAddressError';
  }
}

/** IANA's global unicast block: an IPv6 address outside it (`::7f00:1`, IPv4-compatible, is "unicast" to ipaddr) is not public. */
const globalUnicast = ipaddr.parseCIDR('2000::/3');

export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  if (parsed.kind() === 'ipv6' && !(parsed as ipaddr.IPv6).match(globalUnicast)) return false;
  return parsed.range() === 'unicast';
}

/** Throws `BlockedAddressError` for a URL Herald must not fetch. With `allowInsecure` anything http(s) passes. */
export function assertFetchableUrl(raw: string | URL, allowInsecure: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new BlockedAddressError(`"${String(raw)}" is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new BlockedAddressError(`${url.protocol} URLs are not fetched`);
  }
  if (allowInsecure) return url;
  if (url.protocol !== 'https:') throw new BlockedAddressError('plain http URLs are refused; use https');
  if (url.username || url.password) throw new BlockedAddressError('URLs with credentials are refused');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (net.isIP(host) && !isPublicAddress(host)) throw new BlockedAddressError(`${host} is not a public address`);
  if (host === 'localhost' || host.endsWith('.localhost')) throw new BlockedAddressError(`${host} is not a public address`);
  return url;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/**
 * A `dns.lookup` replacement for sockets: resolves, then refuses any non-public answer. The refusal does not name
 * the address: it reaches clients (a media URL's 400, a webhook delivery's error), and would tell them what an
 * internal name resolves to.
 */
export function publicOnlyLookup(hostname: string, options: dns.LookupOptions, callback: LookupCallback): void {
  dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, []);
    const list = addresses as dns.LookupAddress[];
    const blocked = list.find((a) => !isPublicAddress(a.address));
    if (blocked) return callback(new BlockedAddressError(`${hostname} resolves to an address that is not public`), []);
    if (options.all) return callback(null, list);
    callback(null, list[0].address, list[0].family);
  });
}
