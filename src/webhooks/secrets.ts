import { randomBytes } from 'node:crypto';
import type { SealedBox } from '../crypto/sealed-box';
import type { RetiredSecret, WebhookEndpointRow } from '../db/tables/webhooks';

/** Endpoint secrets: `whsec_` + base64 of 32 random bytes (Standard Webhooks), sealed at rest bound to the endpoint. */

export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export function sealWebhookSecret(box: SealedBox, endpointId: string, secret: string): string {
  return box.seal(secret, sealContext(endpointId));
}

export function openWebhookSecret(box: SealedBox, endpointId: string, sealed: string): string {
  return box.open(sealed, sealContext(endpointId));
}

function sealContext(endpointId: string): string {
  return `webhook-endpoint:${endpointId}`;
}

/**
 * The rotated-out secrets that still sign, newest first: each for its own 24 hours from its rotation, so a second
 * rotation within a day does not cut the first secret off (`rotateOwnSecret` keeps up to three).
 */
export function stillSigning(endpoint: Pick<WebhookEndpointRow, 'retired_secrets'>, now: Date): RetiredSecret[] {
  return endpoint.retired_secrets.filter((retired) => new Date(retired.expires_at) > now);
}

/** What signs a delivery now: the current secret first, then every rotated-out one still signing. */
export function signingSecrets(box: SealedBox, endpoint: Pick<WebhookEndpointRow, 'id' | 'secret_sealed' | 'retired_secrets'>, now: Date): string[] {
  return [endpoint.secret_sealed, ...stillSigning(endpoint, now).map((retired) => retired.sealed)].map((sealed) => openWebhookSecret(box, endpoint.id, sealed));
}
