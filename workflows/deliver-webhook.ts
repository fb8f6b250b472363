import { proxyActivities, sleep } from '@temporalio/workflow';
import type { createWebhookActivities } from '../activities/webhooks';

/**
 * Delivers one event to one endpoint (workflow id `webhook-<event id>-<endpoint id>`, so a dispatcher or reconciler
 * that runs again starts nothing twice). A failed attempt is retried after each wait of the schedule below, as durable
 * timers; after the last it is given up. A 410, or five days of failures, disables the endpoint (the activity
 * decides) and ends the delivery. A `dispatched` delivery keeps its progress in `webhook_dispatches`, so one restarted
 * by the reconciler (Temporal forgot the first) resumes the schedule where it stood; a redelivery starts it afresh.
 */

/** 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h (decisions.md "Events and webhooks"), in milliseconds. */
export const webhookRetrySchedule = [5, 300, 1_800, 7_200, 18_000, 36_000, 50_400, 72_000, 86_400].map((seconds) => seconds * 1000);

const { attemptWebhookDelivery, resumeWebhookDelivery } = proxyActivities<ReturnType<typeof createWebhookActivities>>({
  // The receiver has 15 s; the rest is signing and bookkeeping. Database trouble is retried; an answer never is.
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 20 },
});

type WebhookDeliveryOutcome = 'delivered' | 'disabled' | 'gone' | 'given_up';

/**
 * `dispatched`: its progress is kept in `webhook_dispatches`; `fresh`: started by the dispatcher right after writing
 * that row (nothing to resume, so it is not read).
 */
export async function deliverWebhook(input: { eventId: string; endpointId: string; dispatched?: boolean; fresh?: boolean }): Promise<WebhookDeliveryOutcome> {
  const target = { eventId: input.eventId, endpointId: input.endpointId };
  let first = 0;
  if (input.dispatched && !input.fresh) {
    const resumed = await resumeWebhookDelivery({ ...target, at: Date.now() });
    if (resumed === null) return 'gone'; // settled meanwhile: nothing is sent twice
    if (resumed.waitMs > 0) await sleep(resumed.waitMs);
    first = resumed.attempt;
  }
  for (let attempt = first; ; attempt += 1) {
    const retryInMs = attempt < webhookRetrySchedule.length ? webhookRetrySchedule[attempt] : null;
    const verdict = await attemptWebhookDelivery({ ...target, at: Date.now(), ...(input.dispatched ? { dispatch: { attempt, retryInMs } } : {}) });
    if (verdict !== 'failed') return verdict;
    if (retryInMs === null) return 'given_up';
    await sleep(retryInMs);
  }
}
