import { condition, defineSignal, proxyActivities, setHandler, sleep } from '@temporalio/workflow';
import type { createWebhookActivities } from '../activities/webhooks';

/**
 * Delivers one event to one endpoint (workflow id `webhook-<event id>-<endpoint id>`, so a dispatcher or reconciler
 * that runs again starts nothing twice). A failed attempt is retried after each wait of the schedule below, as durable
 * timers; after the last it is given up. A 410, or five days of failures, disables the endpoint (the activity
 * decides) and ends the delivery. A `dispatched` delivery keeps its progress in `webhook_dispatches`, so one restarted
 * by the reconciler (Temporal forgot the first) resumes the schedule where it stood; a redelivery starts it afresh.
 * A user asking for it again while it waits for a retry (`/redeliver`, `/test`) signals `attemptNow`: the wait ends
 * and the next attempt goes at once, though never sooner than the schedule's first retry after the last attempt.
 */

/** 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h (decisions.md "Events and webhooks"), in milliseconds. */
export const webhookRetrySchedule = [5, 300, 1_800, 7_200, 18_000, 36_000, 50_400, 72_000, 86_400].map((seconds) => seconds * 1000);

const { attemptWebhookDelivery, resumeWebhookDelivery } = proxyActivities<ReturnType<typeof createWebhookActivities>>({
  // The receiver has 15 s; the rest is signing and bookkeeping. Database trouble is retried; an answer never is.
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 20 },
});

/**
 * "Send it now" from a user who asked again while this delivery waits (decisions.md: `/redeliver` "sends an event
 * again now"; `/test` sends a `webhook.test`). Joining the waiting delivery kept the routes bounded but left the ask
 * unanswered for up to 24 hours (the client has fixed its endpoint and the next retry is hours away). The ask only
 * ends a wait, so looping the routes still runs one delivery at a time, an attempt at most every 5 s.
 */
const attemptNowSignal = defineSignal('attemptNow');
/** The signal's name, as a type: what sends it (`src/webhooks/sends.ts`) fails to build if the name changes here. */
export type AttemptNowSignalName = (typeof attemptNowSignal)['name'];

type WebhookDeliveryOutcome = 'delivered' | 'disabled' | 'gone' | 'given_up';

/**
 * `dispatched`: its progress is kept in `webhook_dispatches`; `fresh`: started by the dispatcher right after writing
 * that row (nothing to resume, so it is not read).
 */
export async function deliverWebhook(input: { eventId: string; endpointId: string; dispatched?: boolean; fresh?: boolean }): Promise<WebhookDeliveryOutcome> {
  const target = { eventId: input.eventId, endpointId: input.endpointId };
  let asked = false;
  setHandler(attemptNowSignal, () => void (asked = true));
  let lastAttemptEnded = -Infinity;
  // A wait for the next attempt that an ask ends early. With no ask it is the one timer `sleep` was (`condition` with a
  // timeout starts the same timer and adds no command until an ask cancels it), so histories recorded before replay
  // unchanged and no patch is needed. An ask that came before the wait (during the attempt) is not carried over.
  const retryWait = async (ms: number) => {
    asked = false;
    if (!(await condition(() => asked, ms))) return;
    const tooSoon = lastAttemptEnded + webhookRetrySchedule[0] - Date.now();
    if (tooSoon > 0) await sleep(tooSoon);
  };
  let first = 0;
  if (input.dispatched && !input.fresh) {
    const resumed = await resumeWebhookDelivery({ ...target, at: Date.now() });
    if (resumed === null) return 'gone'; // settled meanwhile: nothing is sent twice
    if (resumed.waitMs > 0) await retryWait(resumed.waitMs);
    first = resumed.attempt;
  }
  for (let attempt = first; ; attempt += 1) {
    const retryInMs = attempt < webhookRetrySchedule.length ? webhookRetrySchedule[attempt] : null;
    const verdict = await attemptWebhookDelivery({ ...target, at: Date.now(), ...(input.dispatched ? { dispatch: { attempt, retryInMs } } : {}) });
    if (verdict !== 'failed') return verdict;
    if (retryInMs === null) return 'given_up';
    lastAttemptEnded = Date.now();
    await retryWait(retryInMs);
  }
}
