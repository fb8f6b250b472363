import { z } from 'zod';
import type { WebhookEndpointRow } from '../db/tables/webhooks';
import { eventTypes } from '../events/catalogue';
import { stillSigning } from './secrets';

/** The webhook endpoint object (decisions.md "Events and webhooks"). Its secret is shown only on creation and rotation. */
export const WebhookEndpointSchema = z
  .object({
    id: z.string(),
    url: z.string(),
    events: z.array(z.enum(eventTypes)).nullable().meta({ description: 'The types delivered; null = every type' }),
    description: z.string().nullable(),
    enabled: z.boolean(),
    disabled_reason: z.string().nullable().meta({ description: 'Why Herald switched it off (a 410, or 5 days of failures); null otherwise' }),
    previous_secret_expires_at: z
      .string()
      .nullable()
      .meta({ description: 'During a rotation: when the secret rotated out last stops signing (each rotated-out secret signs for 24 hours from its rotation)' }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'WebhookEndpoint' });

export function toWebhookEndpointView(row: WebhookEndpointRow, now = new Date()): z.infer<typeof WebhookEndpointSchema> {
  const [lastRetired] = stillSigning(row, now);
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    description: row.description,
    enabled: row.enabled,
    disabled_reason: row.disabled_reason,
    previous_secret_expires_at: lastRetired ? new Date(lastRetired.expires_at).toISOString() : null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
