import type { Client } from '@temporalio/client';
import type { Db } from '../db';
import type { Logger } from '../logger';

/**
 * Turns new outbox rows into deliveries: for each undispatched event, one `webhook_dispatches` row per enabled
 * endpoint of its user subscribed to its type (`webhook.test` only goes where `/test` sends it), written in the
 * transaction that marks the event dispatched; once that commits, each new delivery's `deliverWebhook` starts. The
 * workflow id is the event id + the endpoint id (conflict policy USE_EXISTING), so a start is idempotent: a dispatcher
 * that dies before starting, or a Temporal that forgets its workflows, is made good by the reconciler
 * (`reconcile.ts`), which starts the workflows of dispatches not yet settled.
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

const startConcurrency = 16;

/** One batch, oldest first; returns how many events were dispatched. */
export async function dispatchEvents(deps: DispatchDeps, batch = 100): Promise<number> {
  const { events, deliveries } = await claimEvents(deps.db, batch);
  // Starts are round trips to Temporal: a few at once (one at a time held a burst to ~40 events a second).
  const starter = async () => {
    for (let delivery = deliveries.shift(); delivery; delivery = deliveries.shift()) {
      // Not started now (Temporal unreachable): the dispatch row stays pending and the reconciler starts it.
      await startDelivery(deps, delivery.event_id, delivery.endpoint_id, { fresh: true }).catch((err) => deps.logger.warn({ err, ...delivery }, 'webhook delivery not started'));
    }
  };
  await Promise.all(Array.from({ length: Math.min(startConcurrency, deliveries.length) }, starter));
  return events;
}

/** Records the deliveries of up to `batch` undispatched events and marks them dispatched, in one transaction. */
export async function claimEvents(db: Db, batch: number): Promise<{ events: number; deliveries: Array<{ event_id: string; endpoint_id: string }> }> {
  return db.transaction().execute(async (trx) => {
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
    if (events.length === 0) return { events: 0, deliveries: [] };
    // The enabled endpoints of the batch's users in one read (a burst's batch is many events of few users), each
    // event then matched to its user's endpoints that take its type (`events` null: every type).
    const endpoints = await trx
      .selectFrom('webhook_endpoints')
      .select(['id', 'user_id', 'events'])
      .where('user_id', 'in', [...new Set(events.map((e) => e.user_id))])
      .where('enabled', '=', true)
      .orderBy('id')
      .execute();
    const rows: Array<{ event_id: string; endpoint_id: string }> = [];
    for (const event of events) {
      for (const endpoint of endpoints) {
        if (endpoint.user_id === event.user_id && (endpoint.events === null || endpoint.events.includes(event.type))) rows.push({ event_id: event.id, endpoint_id: endpoint.id });
      }
    }
    // A delivery recorded before (a mark lost after its transaction) is not recorded, nor started, again.
    const deliveries = rows.length === 0 ? [] : await trx.insertInto('webhook_dispatches').values(rows).onConflict((oc) => oc.doNothing()).returning(['event_id', 'endpoint_id']).execute();
    await trx.updateTable('events').set({ dispatched_at: new Date() }).where('id', 'in', events.map((e) => e.id)).execute();
    return { events: events.length, deliveries };
  });
}

/**
 * Starts (or finds running) the delivery of a dispatched event to an endpoint; it resumes from its dispatch row, unless
 * `fresh` (the row was written just now: its first attempt is due, and reading it would cost an activity).
 */
export async function startDelivery(deps: Pick<DispatchDeps, 'temporal' | 'taskQueue'>, eventId: string, endpointId: string, options: { fresh?: boolean } = {}): Promise<void> {
  try {
    await deps.temporal.workflow.start('deliverWebhook', {
      taskQueue: deps.taskQueue,
      workflowId: webhookWorkflowId(eventId, endpointId),
      args: [{ eventId, endpointId, dispatched: true, fresh: options.fresh ?? false }],
      workflowIdConflictPolicy: 'USE_EXISTING',
      // A completed delivery is not repeated; one that failed (its activity gave up on the database) may run again.
      workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
    });
  } catch (err) {
    if ((err as Error).name === 'WorkflowExecutionAlreadyStartedError') return;
    throw err;
  }
}

/** How long `stop()` waits by default for a run in progress (a batch of 100 events and their starts). */
const stopWaitMs = 5_000;

/**
 * Dispatches every `intervalMs` until stopped (each run drains what is pending). `stop()` starts no further run and
 * waits for the one in progress (at most `waitMs`; it then logs that it gave up), so a shutdown closing the database
 * next does not close it under a run still writing. The run ends after its current batch.
 */
export function startEventDispatcher(deps: DispatchDeps, intervalMs = 1_000): { stop(waitMs?: number): Promise<void> } {
  let run: Promise<void> | null = null;
  let stopping = false;
  const timer = setInterval(() => {
    if (run) return;
    run = (async () => {
      while (!stopping && (await dispatchEvents(deps)) > 0);
    })()
      .catch((err) => deps.logger.error({ err }, 'event dispatch failed'))
      .finally(() => (run = null));
  }, intervalMs);
  return {
    stop: async (waitMs = stopWaitMs) => {
      stopping = true;
      clearInterval(timer);
      if (!run) return;
      let timeout: NodeJS.Timeout | undefined;
      const gaveUp = await Promise.race([
        run.then(() => false),
        new Promise<boolean>((resolve) => (timeout = setTimeout(() => resolve(true), waitMs))),
      ]).finally(() => clearTimeout(timeout));
      if (gaveUp) deps.logger.warn({ waitMs }, 'event dispatcher stopped while a run was still in progress');
    },
  };
}
