import type { SealedBox } from '../src/crypto/sealed-box';
import type { Db } from '../src/db';
import { toEventView } from '../src/events/view';
import type { Logger } from '../src/logger';
import { type HttpClient, TransportError } from '../src/net/http';
import { pendingDispatch, recordAttempt, settleDispatch, type AttemptVerdict } from '../src/webhooks/delivery-state';
import { signingSecrets } from '../src/webhooks/secrets';
import { webhookHeaders } from '../src/webhooks/signature';

/**
 * A delivery attempt gets 15 s for the receiver's status (decisions.md "Events and webhooks"), which is the verdict.
 * Nothing reads the body after it: it gets 2 s and 64 KiB more, and one that is longer, slower or never ends is cut
 * short, never a failure (a 2xx followed by a trickling body was recorded as a timeout and delivered again).
 */
const attemptTimeoutMs = 15_000;
const receiverBody = { ms: 2_000, bytes: 64 * 1024 };

export interface WebhookActivityDeps {
  db: Db;
  logger: Logger;
  sealedBox: SealedBox;
  /** The guarded client (`src/net/http.ts`): public addresses only unless HERALD_ALLOW_INSECURE_URLS; no redirects. */
  http: HttpClient;
}

export function createWebhookActivities(deps: WebhookActivityDeps) {
  return {
    /**
     * One attempt to deliver an event to an endpoint: signed afresh (with every secret still signing after rotations), the same
     * `webhook-id` every time, recorded with what the endpoint did to it. `gone`: the event or endpoint no longer
     * exists, or the endpoint is switched off, so there is nothing left to deliver. `at` is the workflow's time (the
     * failing-run rule counts it); the rotation's 24 hours are set and read by the wall clock, as the receiver's are.
     */
    async attemptWebhookDelivery(input: { eventId: string; endpointId: string; at: number; dispatch?: { attempt: number; retryInMs: number | null } }): Promise<AttemptVerdict | 'gone'> {
      const endpoint = await deps.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', input.endpointId).executeTakeFirst();
      const event = await deps.db.selectFrom('events').selectAll().where('id', '=', input.eventId).executeTakeFirst();
      if (!endpoint || !endpoint.enabled || !event || event.user_id !== endpoint.user_id) {
        if (input.dispatch) await settleDispatch(deps.db, input.eventId, input.endpointId);
        return 'gone';
      }
      const secrets = signingSecrets(deps.sealedBox, endpoint, new Date());
      const body = JSON.stringify(toEventView(event));
      const headers = { ...webhookHeaders(secrets, event.id, Math.floor(Date.now() / 1000), body), 'content-type': 'application/json' };
      const started = Date.now();
      let statusCode: number | null = null;
      let error: string | null = null;
      try {
        const response = await deps.http.request({ method: 'POST', url: endpoint.url, headers, body, timeoutMs: attemptTimeoutMs, statusOnly: { bodyMs: receiverBody.ms }, maxBytes: receiverBody.bytes });
        statusCode = response.status;
      } catch (err) {
        if (!(err instanceof TransportError)) throw err;
        error = err.message;
      }
      const durationMs = Date.now() - started;
      deps.logger.debug({ eventId: event.id, endpointId: endpoint.id, statusCode, error, durationMs }, 'webhook delivery attempt');
      return recordAttempt(deps.db, { endpointId: endpoint.id, eventId: event.id, at: new Date(input.at), statusCode, error, durationMs, dispatch: input.dispatch });
    },

    /**
     * Where a dispatched delivery's retry schedule stands, so a workflow the reconciler restarted after Temporal
     * forgot the first resumes it (the next attempt's index, and how long until it is due from `at`, the workflow's
     * now) instead of starting over; null when it is settled or was never dispatched.
     */
    async resumeWebhookDelivery(input: { eventId: string; endpointId: string; at: number }): Promise<{ attempt: number; waitMs: number } | null> {
      const pending = await pendingDispatch(deps.db, input.eventId, input.endpointId);
      return pending ? { attempt: pending.attempts, waitMs: Math.max(0, pending.nextAttemptAt.getTime() - input.at) } : null;
    },
  };
}
