import { z } from 'zod';
import type { WebhookEndpointRow } from '../db/tables/webhooks';
import { eventTypes } from '../events/catalogue';

/** The webhook endpoint object (decisions.md "Events and webhooks"). Its secret is shown only on creation and rotation. */
export const WebhookEndpointSchema = z
  .object({
    id: z.string(),
    url: z.string(),
    events: z.array(z.enum(eventTypes)).nullable().meta({ description: 'The types delivered; null = every type' }),
    description: z.string().nullable(),
    enabled: z.boolean(),
    disabled_reason: z.string().nullable().meta({ description: 'Why Herald switched it off (a 410, or 5 days of failures); null otherwise' }),
    previous_secret_expires_at: z.string().nullable().meta({ description: 'During a rotation: when the previous secret stops signing' }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'WebhookEndpoint' });

export function toWebhookEndpointView(row: WebhookEndpointRow, now = new Date()): z.infer<typeof WebhookEndpointSchema> {
  const rotating = row.previous_secret_expires_at !== null && row.previous_secret_expires_at > now;
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    description: row.description,
    enabled: row.enabled,
    disabled_reason: row.disabled_reason,
    previous_secret_expires_at: rotating ? row.previous_secret_expires_at!.toISOString() : null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
