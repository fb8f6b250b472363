import { z } from 'zod';
import type { EventRow } from '../db/tables/events';
import { eventTypes } from './catalogue';

/** The event object of decisions.md ("Events and webhooks"), as the events API lists it and webhooks deliver it. */
export const EventSchema = z
  .object({
    id: z.string().meta({ description: '`evt_` + 26 characters; ids sort in creation order' }),
    type: z.enum(eventTypes),
    created_at: z.string().meta({ description: 'ISO 8601, UTC, millisecond precision' }),
    data: z.record(z.string(), z.unknown()).meta({ description: 'The resource as the API returns it (a post; `{ thread_id, posts }` for a thread; an account)' }),
    request: z
      .object({ id: z.string(), idempotency_key: z.string().nullable() })
      .nullable()
      .meta({ description: 'The API request that caused the change; null for the service\'s own work (a scheduled publish, a sync)' }),
  })
  .meta({ id: 'Event' });

type EventView = z.infer<typeof EventSchema>;

export function toEventView(row: EventRow): EventView {
  return { id: row.id, type: row.type, created_at: row.created_at.toISOString(), data: row.data, request: row.request };
}
