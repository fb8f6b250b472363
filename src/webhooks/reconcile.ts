import type { Client } from '@temporalio/client';
import { sql } from 'kysely';
import type { Db } from '../db';
import type { Logger } from '../logger';
import { startDelivery } from './dispatcher';

/**
 * Keeps webhook deliveries alive across restarts of the embedded, memory-only Temporal (the pattern of the posts
 * reconciler, `src/posts/reconcile.ts`): every `webhook_dispatches` row not yet settled gets its `deliverWebhook`,
 * started idempotently (workflow id = event id + endpoint id, a running one is left alone), which resumes the retry
 * schedule from the row. At start over every pending delivery; then every minute over those overdue by more than a
 * minute (a running workflow would have attempted them: the dispatcher's start was lost, or Temporal restarted).
 */

interface WebhookReconcileDeps {
  db: Db;
  temporal: Client;
  taskQueue: string;
  logger: Logger;
}

const overdueGrace = sql<Date>`now() - interval '1 minute'`;

export async function reconcileWebhookDeliveries(deps: WebhookReconcileDeps, scope: 'all' | 'overdue' = 'all'): Promise<{ checked: number }> {
  let query = deps.db.selectFrom('webhook_dispatches').select(['event_id', 'endpoint_id']).where('settled_at', 'is', null).orderBy('next_attempt_at');
  if (scope === 'overdue') query = query.where('next_attempt_at', '<', overdueGrace);
  const queue = await query.execute();
  const checked = queue.length;
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      await startDelivery(deps, next.event_id, next.endpoint_id).catch((err) => deps.logger.error({ err, ...next }, 'reconcile: could not start a webhook delivery'));
    }
  };
  await Promise.all(Array.from({ length: Math.min(8, queue.length) }, worker));
  return { checked };
}

/** Runs `reconcileWebhookDeliveries` now over everything, then every `intervalMs` over the overdue. */
export function startWebhookReconciler(deps: WebhookReconcileDeps, intervalMs = 60_000): { first: Promise<{ checked: number }>; stop(): void } {
  const first = reconcileWebhookDeliveries(deps, 'all').catch((err) => {
    deps.logger.error({ err }, 'webhook reconcile at start failed');
    return { checked: 0 };
  });
  const timer = setInterval(() => {
    reconcileWebhookDeliveries(deps, 'overdue').catch((err) => deps.logger.error({ err }, 'periodic webhook reconcile failed'));
  }, intervalMs);
  timer.unref();
  return { first, stop: () => clearInterval(timer) };
}
