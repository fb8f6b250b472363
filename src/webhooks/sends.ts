import type { Client } from '@temporalio/client';
import type { Db } from '../db';
import type { EventRow } from '../db/tables/events';
import { recordEvents } from '../events/outbox';
import { findOwnEvent } from '../events/repository';
import { startDelivery, webhookWorkflowId } from './dispatcher';
import { testInFlight } from './delivery-state';
import { findOwnEndpoint, lockOwnEndpoint } from './repository';
import type { AttemptNowSignalName } from '../../workflows/deliver-webhook';

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

/**
 * `alreadyInFlight`: the same delivery was under way, and this ask joined it rather than starting another; a joined
 * delivery waiting for its retry attempts at once (`askAttemptNow`).
 */
type Sent = { ok: true; event: EventRow; alreadyInFlight: boolean };

/**
 * Writes a `webhook.test` event, dispatched to this endpoint only, and starts its delivery. At most one test is in
 * flight per endpoint: while one is (its dispatch not settled, retries included), this answers that test's event and
 * writes nothing, so looping the route cannot multiply deliveries. The endpoint's row lock orders two asks at once.
 */
export async function sendTestEvent(deps: SendDeps, userId: string, endpointId: string): Promise<Sent | SendRefused> {
  const sent = await deps.db.transaction().execute(async (trx): Promise<Sent | SendRefused> => {
    const endpoint = await lockOwnEndpoint(trx, userId, endpointId);
    if (!endpoint) return { ok: false, missing: 'endpoint' };
    if (!endpoint.enabled) return { ok: false, disabled: { reason: endpoint.disabled_reason } };
    const inFlight = await testInFlight(trx, endpoint.id);
    if (inFlight) return { ok: true, event: inFlight, alreadyInFlight: true };
    const [row] = await recordEvents(trx, [{ userId, type: 'webhook.test', data: { endpoint_id: endpoint.id, message: 'A test event from Herald' } }]);
    await trx.updateTable('events').set({ dispatched_at: new Date() }).where('id', '=', row.id).execute();
    await trx.insertInto('webhook_dispatches').values({ event_id: row.id, endpoint_id: endpoint.id }).execute();
    return { ok: true, event: row, alreadyInFlight: false };
  });
  if (sent.ok && !sent.alreadyInFlight) await startDelivery(deps, sent.event.id, endpointId, { fresh: true });
  else if (sent.ok) await askAttemptNow(deps, webhookWorkflowId(sent.event.id, endpointId));
  return sent;
}

/**
 * The event again, now, on the full retry schedule, with the same `webhook-id` (receivers deduplicate on it). One
 * redelivery of an event to an endpoint is in flight at a time (workflow id `<delivery's>-again`): asking again while
 * it runs, retries included, joins it and sends nothing more. Not a dispatch: a restart of the embedded Temporal
 * forgets it (the client can ask again; it was told 202, not delivered).
 */
export async function redeliverEvent(deps: SendDeps, userId: string, endpointId: string, eventId: string): Promise<Sent | SendRefused> {
  const endpoint = await findOwnEndpoint(deps.db, userId, endpointId);
  if (!endpoint) return { ok: false, missing: 'endpoint' };
  const event = await findOwnEvent(deps.db, userId, eventId);
  if (!event) return { ok: false, missing: 'event' };
  if (!endpoint.enabled) return { ok: false, disabled: { reason: endpoint.disabled_reason } };
  const workflowId = `${webhookWorkflowId(event.id, endpoint.id)}-again`;
  try {
    await deps.temporal.workflow.start('deliverWebhook', {
      taskQueue: deps.taskQueue,
      workflowId,
      args: [{ eventId: event.id, endpointId: endpoint.id }],
      // A running one is joined (the start fails, and says so); a finished one may be asked for again.
      workflowIdConflictPolicy: 'FAIL',
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
    });
  } catch (err) {
    if ((err as Error).name !== 'WorkflowExecutionAlreadyStartedError') throw err;
    await askAttemptNow(deps, workflowId);
    return { ok: true, event, alreadyInFlight: true };
  }
  return { ok: true, event, alreadyInFlight: false };
}

const attemptNow: AttemptNowSignalName = 'attemptNow';

/**
 * Each ask is an event in the joined workflow's history, which the embedded Temporal keeps in memory and a real one
 * caps: a client looping the route adds one at most every 5 s per delivery in this process (the workflow attempts no
 * more often either). Entries are added in time order and live 5 s, so the expired ones are dropped from the front.
 */
const askSpacingMs = 5_000;
const lastAsked = new Map<string, number>();

function mayAsk(workflowId: string, now: number): boolean {
  for (const [id, at] of lastAsked) {
    if (now - at < askSpacingMs) break;
    lastAsked.delete(id);
  }
  if (lastAsked.has(workflowId)) return false;
  lastAsked.set(workflowId, now);
  return true;
}

/**
 * The joined delivery, if it is waiting for a retry, attempts at once (not sooner than 5 s after its last attempt:
 * `deliverWebhook`). One that has just ended, or that Temporal forgot (its dispatch row brings it back through the
 * reconciler), is not there to ask: the answer stays as it was.
 */
async function askAttemptNow(deps: SendDeps, workflowId: string): Promise<void> {
  if (!mayAsk(workflowId, Date.now())) return;
  try {
    await deps.temporal.workflow.getHandle(workflowId).signal(attemptNow);
  } catch (err) {
    if ((err as Error).name !== 'WorkflowNotFoundError') throw err;
  }
}
