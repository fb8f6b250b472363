import { randomUUID } from 'node:crypto';
import type { SealedBox } from '../crypto/sealed-box';
import type { Db } from '../db';
import type { WebhookEndpointRow } from '../db/tables/webhooks';
import type { EventType } from '../events/catalogue';
import { assertFetchableUrlResolved, BlockedAddressError } from '../net/address-guard';
import * as endpoints from './repository';
import { newWebhookSecret, sealWebhookSecret } from './secrets';

/**
 * Managing a user's webhook endpoints (decisions.md "Events and webhooks"). Answers domain results; the routes turn
 * them into HTTP. A URL is checked by the same guard as media URLs (`src/net/address-guard.ts`), and its host's DNS
 * answers too: it is fetched later, and one that resolves to a private address could never receive.
 */

const maxEndpointsPerUser = 10;
/**
 * How long a rotated-out secret keeps signing beside the new one, and how many rotated-out secrets may sign at once:
 * a fourth rotation within 24 hours stops the oldest of them (a bound on the signatures each delivery carries).
 */
const rotation = { overlapMs: 24 * 60 * 60 * 1000, keepRetired: 3 };

export interface WebhooksDeps {
  db: Db;
  sealedBox: SealedBox;
  allowInsecureUrls: boolean;
}

type Refusal = { ok: false; message: string };
type Created = { ok: true; endpoint: WebhookEndpointRow; secret: string };

export async function createEndpoint(deps: WebhooksDeps, userId: string, input: { url: string; events?: EventType[]; description?: string }): Promise<Created | Refusal> {
  const urlRefusal = await refusedUrl(input.url, deps.allowInsecureUrls);
  if (urlRefusal) return urlRefusal;
  const id = randomUUID();
  const secret = newWebhookSecret();
  return deps.db.transaction().execute(async (trx): Promise<Created | Refusal> => {
    if ((await endpoints.lockAndCountEndpoints(trx, userId)) >= maxEndpointsPerUser) {
      return { ok: false, message: `At most ${maxEndpointsPerUser} webhook endpoints a user; delete one before adding another` };
    }
    const endpoint = await endpoints.insertEndpoint(trx, {
      id,
      user_id: userId,
      url: input.url,
      events: input.events ? [...new Set(input.events)] : null,
      description: input.description ?? null,
      secret_sealed: sealWebhookSecret(deps.sealedBox, id, secret),
    });
    return { ok: true, endpoint, secret };
  });
}

export async function changeEndpoint(deps: WebhooksDeps, userId: string, endpointId: string, changes: endpoints.EndpointChanges): Promise<{ ok: true; endpoint: WebhookEndpointRow | undefined } | Refusal> {
  if (changes.url !== undefined) {
    // Another user's endpoint is 404 whatever the body says (decisions.md): its URL is neither judged nor resolved.
    if (!(await endpoints.findOwnEndpoint(deps.db, userId, endpointId))) return { ok: true, endpoint: undefined };
    const urlRefusal = await refusedUrl(changes.url, deps.allowInsecureUrls);
    if (urlRefusal) return urlRefusal;
  }
  const events = changes.events ? [...new Set(changes.events)] : changes.events;
  return { ok: true, endpoint: await endpoints.updateOwnEndpoint(deps.db, userId, endpointId, { ...changes, events }) };
}

/** A new secret, shown once; the old one keeps signing for 24 hours, as do those rotated out before it. Undefined for another user's endpoint. */
export async function rotateSecret(deps: WebhooksDeps, userId: string, endpointId: string): Promise<{ endpoint: WebhookEndpointRow; secret: string } | undefined> {
  const secret = newWebhookSecret();
  const endpoint = await endpoints.rotateOwnSecret(deps.db, userId, endpointId, sealWebhookSecret(deps.sealedBox, endpointId, secret), rotation);
  return endpoint && { endpoint, secret };
}

async function refusedUrl(url: string, allowInsecure: boolean): Promise<Refusal | null> {
  try {
    await assertFetchableUrlResolved(url, allowInsecure);
    return null;
  } catch (err) {
    if (err instanceof BlockedAddressError) return { ok: false, message: `url: ${err.message}` };
    throw err;
  }
}
