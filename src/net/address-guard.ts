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
  // A trailing dot is the same name, fully qualified: `localhost.` is localhost.
  const name = host.replace(/\.$/, '').toLowerCase();
  if (name === 'localhost' || name.endsWith('.localhost')) throw new BlockedAddressError(`${host} is not a public address`);
  return url;
}

/**
 * `assertFetchableUrl`, then the host's DNS answers now, under the connect-time rule: for a URL kept to be fetched
 * later (a webhook endpoint), so one that could never be fetched is refused when it is given. A name with no answer
 * passes: it reaches nothing (nothing to guard), its record may not exist yet, and every fetch checks again.
 */
export async function assertFetchableUrlResolved(raw: string | URL, allowInsecure: boolean): Promise<URL> {
  const url = assertFetchableUrl(raw, allowInsecure);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (allowInsecure || net.isIP(host)) return url;
  let addresses: dns.LookupAddress[];
  try {
    addresses = await dns.promises.lookup(host, { all: true });
  } catch {
    return url;
  }
  const refusal = nonPublicAnswer(host, addresses);
  if (refusal) throw refusal;
  return url;
}

/**
 * The refusal of a name that resolves to any address that is not public. It does not name the address: it reaches
 * clients (a media URL's 400, a webhook delivery's error, an endpoint's 400), and would tell them what an internal
 * name resolves to.
 */
function nonPublicAnswer(hostname: string, addresses: dns.LookupAddress[]): BlockedAddressError | null {
  return addresses.some((a) => !isPublicAddress(a.address)) ? new BlockedAddressError(`${hostname} resolves to an address that is not public`) : null;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/** A `dns.lookup` replacement for sockets: resolves, then refuses any non-public answer (`nonPublicAnswer`). */
export function publicOnlyLookup(hostname: string, options: dns.LookupOptions, callback: LookupCallback): void {
  dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, []);
    const list = addresses as dns.LookupAddress[];
    const refusal = nonPublicAnswer(hostname, list);
    if (refusal) return callback(refusal, []);
    if (options.all) return callback(null, list);
    callback(null, list[0].address, list[0].family);
  });
}
