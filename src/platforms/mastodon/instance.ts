import net from 'node:net';
import { ApiError } from '../../errors';

/**
 * Connecting a Mastodon account names its server in `instance_url`, which people write as a server name
 * (`mastodon.social`), a handle (`@alice@mastodon.social`) or a profile URL (`https://mastodon.social/@alice`).
 * Only the server is kept, as an https origin. Plain http (and loopback/private hosts) only with allowInsecure.
 */

const EXAMPLES = 'like mastodon.social, @user@mastodon.social or https://mastodon.social/@user';
const HOST_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

function invalid(message: string): never {
  throw new ApiError('mastodon_instance_invalid', message);
}

function looksLikePublicHostname(hostname: string): boolean {
  const labels = hostname.split('.');
  return labels.length >= 2 && labels.every((l) => HOST_LABEL.test(l)) && /[a-z]/.test(labels[labels.length - 1]);
}

export function parseMastodonInstance(input: string, options: { allowInsecure?: boolean } = {}): string {
  const raw = input.trim();
  if (!raw) invalid(`instance_url must name a Mastodon server, ${EXAMPLES}.`);
  const handle = /^@?[^@\s/:]+@([^@\s/]+)$/.exec(raw);
  // "@alice" alone names a person, not a server; read as a URL it would become the host "alice".
  if (!handle && raw.startsWith('@')) invalid(`instance_url "${raw}" is a handle without a server; add its server, ${EXAMPLES}.`);
  const candidate = handle ? `https://${handle[1]}` : /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `https://${raw}`;
  let url: URL;
  try {
    url = new URL(candidate);
  } catch {
    invalid(`instance_url "${raw}" is not a server name, handle or URL, ${EXAMPLES}.`);
  }
  if (url.protocol === 'http:' && !options.allowInsecure) invalid('instance_url must use https; plain http is refused.');
  if (url.protocol !== 'https:' && url.protocol !== 'http:') invalid(`instance_url must be an https address, ${EXAMPLES}.`);
  if (url.username || url.password) invalid('instance_url must not carry a user name or password.');
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  if (!options.allowInsecure && (net.isIP(hostname) !== 0 || !looksLikePublicHostname(hostname))) {
    invalid(`instance_url must name a public Mastodon server, ${EXAMPLES}.`);
  }
  return url.origin;
}
