import type { Client } from '@temporalio/client';
import { sql } from 'kysely';
import type { Db } from '../db';
import type { Logger } from '../logger';

/**
 * Turns new outbox rows into delivery workflows: for each undispatched event, one `deliverWebhook` per enabled
 * endpoint of its user subscribed to its type (`webhook.test` only goes where `/test` sends it), then the event is
 * marked dispatched, in the transaction that holds its row. The workflow id is the event id + the endpoint id and
 * starts with conflict policy USE_EXISTING and reuse policy REJECT_DUPLICATE, so a dispatcher that dies between
 * starting and marking (or two dispatchers at once) neither loses nor duplicates a delivery.
 */

export function webhookWorkflowId(eventId: string, endpointId: string): string {
  return `webhook-${eventId}-${endpointId}`;
}

interface DispatchDeps {
  db: Db;
  temporal: Client;
  taskQueue: string;
  logger: Logger;
}

/** One batch, oldest first; returns how many events were dispatched. */
export async function dispatchEvents(deps: DispatchDeps, batch = 100): Promise<number> {
  return deps.db.transaction().execute(async (trx) => {
    const events = await trx
      .selectFrom('events')
      .select(['id', 'user_id', 'type'])
      .where('dispatched_at', 'is', null)
      .where('type', '!=', 'webhook.test')
      .orderBy('id')
      .limit(batch)
      .forUpdate()
      .skipLocked()
      .execute();
    for (const event of events) {
      const endpoints = await trx
        .selectFrom('webhook_endpoints')
        .select('id')
        .where('user_id', '=', event.user_id)
        .where('enabled', '=', true)
        .where((eb) => eb.or([eb('events', 'is', null), sql<boolean>`${event.type} = any(${eb.ref('events')})`]))
        .execute();
      for (const endpoint of endpoints) await startDelivery(deps, event.id, endpoint.id);
    }
    if (events.length > 0) await trx.updateTable('events').set({ dispatched_at: new Date() }).where('id', 'in', events.map((e) => e.id)).execute();
    return events.length;
  });
}

export async function startDelivery(deps: Pick<DispatchDeps, 'temporal' | 'taskQueue'>, eventId: string, endpointId: string): Promise<void> {
  try {
    await deps.temporal.workflow.start('deliverWebhook', {
      taskQueue: deps.taskQueue,
      workflowId: webhookWorkflowId(eventId, endpointId),
      args: [{ eventId, endpointId }],
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
    });
  } catch (err) {
    // Delivered (or given up) already: a finished delivery is not repeated by the dispatcher.
    if ((err as Error).name === 'WorkflowExecutionAlreadyStartedError') return;
    throw err;
  }
}

/** Dispatches every `intervalMs` until stopped (each run drains what is pending). */
export function startEventDispatcher(deps: DispatchDeps, intervalMs = 1_000): { stop(): void } {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    (async () => {
      while ((await dispatchEvents(deps)) > 0);
    })()
      .catch((err) => deps.logger.error({ err }, 'event dispatch failed'))
      .finally(() => (running = false));
  }, intervalMs);
  return { stop: () => clearInterval(timer) };
}
