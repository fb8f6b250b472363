import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { Db } from '../db';
import type { EventRow } from '../db/tables/events';
import { recordEvents } from '../events/outbox';
import { findOwnEvent } from '../events/repository';
import { startDelivery, webhookWorkflowId } from './dispatcher';
import { findOwnEndpoint } from './repository';

/** Deliveries a user asks for: a `webhook.test` event, or an event sent again now. Both run the delivery workflow. */

interface SendDeps {
  db: Db;
  temporal: Client;
  taskQueue: string;
}

/**
 * Why nothing was sent. A switched-off endpoint is refused rather than accepted: its delivery would end before the
 * first attempt (`attemptWebhookDelivery` sends nothing to it), so "accepted" would promise what never happens.
 */
export type SendRefused = { ok: false; missing: 'endpoint' | 'event' } | { ok: false; disabled: { reason: string | null } };

/** Writes a `webhook.test` event, dispatched to this endpoint only, and starts its delivery. */
export async function sendTestEvent(deps: SendDeps, userId: string, endpointId: string): Promise<{ ok: true; event: EventRow } | SendRefused> {
  const endpoint = await findOwnEndpoint(deps.db, userId, endpointId);
  if (!endpoint) return { ok: false, missing: 'endpoint' };
  if (!endpoint.enabled) return { ok: false, disabled: { reason: endpoint.disabled_reason } };
  const event = await deps.db.transaction().execute(async (trx) => {
    const [row] = await recordEvents(trx, [{ userId, type: 'webhook.test', data: { endpoint_id: endpoint.id, message: 'A test event from Herald' } }]);
    await trx.updateTable('events').set({ dispatched_at: new Date() }).where('id', '=', row.id).execute();
    await trx.insertInto('webhook_dispatches').values({ event_id: row.id, endpoint_id: endpoint.id }).execute();
    return row;
  });
  await startDelivery(deps, event.id, endpoint.id, { fresh: true });
  return { ok: true, event };
}

/**
 * The event again, now, on the full retry schedule, with the same `webhook-id` (receivers deduplicate on it). Not a
 * dispatch: a restart of the embedded Temporal forgets it (the client can ask again; it was told 202, not delivered).
 */
export async function redeliverEvent(deps: SendDeps, userId: string, endpointId: string, eventId: string): Promise<{ ok: true; event: EventRow } | SendRefused> {
  const endpoint = await findOwnEndpoint(deps.db, userId, endpointId);
  if (!endpoint) return { ok: false, missing: 'endpoint' };
  const event = await findOwnEvent(deps.db, userId, eventId);
  if (!event) return { ok: false, missing: 'event' };
  if (!endpoint.enabled) return { ok: false, disabled: { reason: endpoint.disabled_reason } };
  await deps.temporal.workflow.start('deliverWebhook', {
    taskQueue: deps.taskQueue,
    workflowId: `${webhookWorkflowId(event.id, endpoint.id)}-again-${randomUUID()}`,
    args: [{ eventId: event.id, endpointId: endpoint.id }],
  });
  return { ok: true, event };
}
