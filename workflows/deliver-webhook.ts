import { proxyActivities, sleep } from '@temporalio/workflow';
import type { createWebhookActivities } from '../activities/webhooks';

/**
 * Delivers one event to one endpoint (workflow id `webhook-<event id>-<endpoint id>`, so a dispatcher that runs
 * again starts nothing twice). A failed attempt is retried after each wait of the schedule below, as durable
 * timers; after the last it is given up. A 410, or five days of failures, disables the endpoint (the activity
 * decides) and ends the delivery.
 */

export const webhookRetrySchedule = ['5 seconds', '5 minutes', '30 minutes', '2 hours', '5 hours', '10 hours', '14 hours', '20 hours', '24 hours'] as const;

const { attemptWebhookDelivery } = proxyActivities<ReturnType<typeof createWebhookActivities>>({
  // The receiver has 15 s; the rest is signing and bookkeeping. Database trouble is retried; an answer never is.
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 20 },
});

type WebhookDeliveryOutcome = 'delivered' | 'disabled' | 'gone' | 'given_up';

export async function deliverWebhook(input: { eventId: string; endpointId: string }): Promise<WebhookDeliveryOutcome> {
  for (let attempt = 0; ; attempt += 1) {
    const verdict = await attemptWebhookDelivery({ ...input, at: Date.now() });
    if (verdict !== 'failed') return verdict;
    if (attempt >= webhookRetrySchedule.length) return 'given_up';
    await sleep(webhookRetrySchedule[attempt]);
  }
}
