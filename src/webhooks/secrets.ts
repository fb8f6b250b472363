import { randomBytes } from 'node:crypto';
import type { SealedBox } from '../crypto/sealed-box';

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
