import { createHmac } from 'node:crypto';

/**
 * Standard Webhooks 1.0 signatures: `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, keyed by the secret's
 * base64-decoded bytes (after `whsec_`); one per secret, space-separated, so a receiver holding either secret of a
 * rotation accepts the delivery. Every attempt is signed afresh with its own timestamp.
 */
export function signWebhook(secrets: readonly string[], id: string, timestampSeconds: number, body: string): string {
  return secrets.map((secret) => `v1,${createHmac('sha256', secretKey(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`).join(' ');
}

/** The three headers of one delivery attempt. */
export function webhookHeaders(secrets: readonly string[], id: string, timestampSeconds: number, body: string): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': signWebhook(secrets, id, timestampSeconds, body),
  };
}

function secretKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
}
