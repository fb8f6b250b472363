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

export async function reconcileWebhookDeliveries(
  deps: WebhookReconcileDeps,
  scope: 'all' | 'overdue' = 'all',
  signal?: AbortSignal,
): Promise<{ checked: number }> {
  let query = deps.db.selectFrom('webhook_dispatches').select(['event_id', 'endpoint_id']).where('settled_at', 'is', null).orderBy('next_attempt_at');
  if (scope === 'overdue') query = query.where('next_attempt_at', '<', overdueGrace);
  const queue = await query.execute();
  const checked = queue.length;
  // Once stopping, no further workflow is started (the client is about to close); the ones being started finish.
  const worker = async () => {
    for (let next = queue.shift(); next && !signal?.aborted; next = queue.shift()) {
      await startDelivery(deps, next.event_id, next.endpoint_id).catch((err) => deps.logger.error({ err, ...next }, 'reconcile: could not start a webhook delivery'));
    }
  };
  await Promise.all(Array.from({ length: Math.min(8, queue.length) }, worker));
  return { checked };
}

/**
 * Runs `reconcileWebhookDeliveries` now over everything, then every `intervalMs` over the overdue, one look at a time
 * (a look over many deliveries can outlast the interval). `stop()` starts no further look and resolves once the one
 * in progress has ended, so the shutdown does not close Temporal's client or the database under it.
 */
export function startWebhookReconciler(deps: WebhookReconcileDeps, intervalMs = 60_000): { first: Promise<{ checked: number }>; stop(): Promise<void> } {
  const stopping = new AbortController();
  let looking: Promise<unknown> | undefined;
  const look = <T>(scope: 'all' | 'overdue', failed: (err: unknown) => T) => {
    const run = reconcileWebhookDeliveries(deps, scope, stopping.signal)
      .catch(failed)
      .finally(() => (looking = undefined));
    looking = run;
    return run;
  };
  const first = look('all', (err) => {
    deps.logger.error({ err }, 'webhook reconcile at start failed');
    return { checked: 0 };
  });
  const timer = setInterval(() => {
    if (looking) return;
    void look('overdue', (err) => deps.logger.error({ err }, 'periodic webhook reconcile failed'));
  }, intervalMs);
  timer.unref();
  return {
    first,
    stop: async () => {
      clearInterval(timer);
      stopping.abort();
      await looking;
    },
  };
}
