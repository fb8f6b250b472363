import assert from 'node:assert/strict';
import dns from 'node:dns/promises';
import os from 'node:os';
import { isPublicAddress } from '../../src/net/address-guard';

/**
 * A name that DNS answers with a private or loopback address, and that the guard's checks by name (which refuse
 * `localhost`) let through to the connect-time lookup: the machine's own hostname, which /etc/hosts maps to
 * 127.0.x.x on a Linux host or to the container's private address in Docker.
 */
export async function privatelyResolvedHostname(): Promise<{ hostname: string; address: string }> {
  const hostname = os.hostname();
  const { address } = await dns.lookup(hostname);
  assert.ok(!isPublicAddress(address), `this test needs ${hostname} (the machine's hostname) to resolve to a private address; it resolves to ${address}`);
  return { hostname, address };
}
