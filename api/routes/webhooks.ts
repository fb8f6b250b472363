import { z } from 'zod';
import { createSealedBox, type SealedBox } from '../../src/crypto/sealed-box';
import { ApiError } from '../../src/errors';
import { eventTypes } from '../../src/events/catalogue';
import { changeEndpoint, createEndpoint, rotateSecret, type WebhooksDeps } from '../../src/webhooks/endpoints';
import { deleteOwnEndpoint, findOwnEndpoint, listDeliveries, listOwnEndpoints } from '../../src/webhooks/repository';
import { redeliverEvent, sendTestEvent, type SendRefused } from '../../src/webhooks/sends';
import { EventSchema, toEventView } from '../../src/events/view';
import { idParams, queryInteger } from '../validation';
import { postsRuntimeOf } from './posts';
import { toWebhookEndpointView, WebhookEndpointSchema } from '../../src/webhooks/view';
import type { AppDeps } from '../deps';
import { defineRoute } from '../route';

/** decisions.md "Events and webhooks": the endpoints API. Scopes: `webhooks:read` to list, `webhooks:write` for the rest. */

const sealedBoxes = new WeakMap<AppDeps, SealedBox>();

function webhooksDeps(deps: AppDeps): WebhooksDeps {
  let sealedBox = deps.sealedBox ?? sealedBoxes.get(deps);
  if (!sealedBox) {
    if (!deps.config.encryptionKey) throw new Error('the webhooks API needs an encryption key (HERALD_ENCRYPTION_KEY)');
    sealedBox = createSealedBox(deps.config.encryptionKey);
    sealedBoxes.set(deps, sealedBox);
  }
  return { db: deps.db, sealedBox, allowInsecureUrls: deps.config.allowInsecureUrls };
}

const eventsField = z
  .array(z.enum(eventTypes, { error: `must be one of ${eventTypes.join(', ')}` }))
  .min(1, 'must name at least one event type; omit it (or send null on PATCH) for every type');
const urlField = z.string().trim().min(1, 'must not be empty').max(2048, 'must be at most 2048 characters').meta({ description: 'https, on a public address' });
const descriptionField = z.string().max(500, 'must be at most 500 characters');

const createBody = z.strictObject({
  url: urlField,
  events: eventsField.optional().meta({ description: 'Omitted: every type' }),
  description: descriptionField.optional(),
});
const changeBody = z
  .strictObject({ url: urlField.optional(), events: eventsField.nullable().optional(), description: descriptionField.nullable().optional(), enabled: z.boolean().optional() })
  .refine((body) => Object.keys(body).length > 0, 'must change at least one of url, events, description, enabled');
const WithSecretSchema = WebhookEndpointSchema.extend({
  secret: z.string().meta({ description: '`whsec_` + base64 of 32 bytes. Shown once; stored encrypted' }),
}).meta({ id: 'WebhookEndpointWithSecret' });

function sendDeps(deps: AppDeps) {
  if (!deps.temporal) throw new Error('sending webhooks needs the Temporal client (AppDeps.temporal)');
  return { db: deps.db, temporal: deps.temporal, taskQueue: postsRuntimeOf(deps).taskQueue };
}

const DeliverySchema = z
  .object({
    id: z.string().meta({ description: 'The attempt: pass the last of a page as `after`' }),
    event_id: z.string(),
    attempted_at: z.string(),
    status_code: z.number().int().nullable().meta({ description: 'Null when no answer came (see error)' }),
    error: z.string().nullable().meta({ description: 'Why no answer came: timeout, refused connection, blocked address' }),
    duration_ms: z.number().int(),
    delivered: z.boolean(),
  })
  .meta({ id: 'WebhookDelivery' });

const SentSchema = z.object({
  data: EventSchema,
  meta: z.object({
    already_in_flight: z.boolean().meta({
      description:
        'True when the same delivery was already under way: this request joined it rather than starting another. A joined delivery waiting for its next retry attempts at once (not sooner than 5 s after its last attempt); one in the middle of an attempt sends nothing more',
    }),
  }),
});

const notFound = (id: string) => new ApiError('not_found', `Webhook endpoint ${id.slice(0, 100)} not found`);

/** Why `/test` or `/redeliver` sent nothing, as the client is told it. */
function sendRefusal(endpointId: string, refused: SendRefused, eventId?: string): ApiError {
  if ('disabled' in refused) {
    const why = refused.disabled.reason ? ` (${refused.disabled.reason})` : '';
    // decisions.md: "Errors use the catalogue"; none of its 409s is about endpoints, so the catch-all 400, as for the
    // 11th endpoint.
    return new ApiError(
      'bad_request',
      `Webhook endpoint ${endpointId} is disabled${why}, so nothing would be delivered to it; switch it back on with PATCH /api/v1/webhooks/${endpointId} { "enabled": true }`,
    );
  }
  return refused.missing === 'event' ? new ApiError('not_found', `Event ${(eventId ?? '').slice(0, 100)} not found`) : notFound(endpointId);
}

export const webhooksRoutes = [
  defineRoute({
    method: 'post',
    path: '/webhooks',
    summary: 'Add a webhook endpoint',
    description: 'At most 10 a user. The URL must be https on a public address (redirects are never followed). The secret is shown once.',
    tags: ['Webhooks'],
    scope: 'webhooks:write',
    body: createBody,
    errors: ['bad_request'],
    responses: { 201: { description: 'The endpoint, with its secret', schema: z.object({ data: WithSecretSchema }) } },
    handler: async ({ body, auth, deps }) => {
      const created = await createEndpoint(webhooksDeps(deps), auth.userId, body);
      if (!created.ok) throw new ApiError('bad_request', created.message);
      return { status: 201, body: { data: { ...toWebhookEndpointView(created.endpoint), secret: created.secret } } };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/webhooks',
    summary: 'List webhook endpoints',
    description: 'Oldest first. Secrets are never shown again.',
    tags: ['Webhooks'],
    scope: 'webhooks:read',
    responses: { 200: { description: 'The endpoints', schema: z.object({ data: z.array(WebhookEndpointSchema) }) } },
    handler: async ({ auth, deps }) => ({ status: 200, body: { data: (await listOwnEndpoints(deps.db, auth.userId)).map((row) => toWebhookEndpointView(row)) } }),
  }),
  defineRoute({
    method: 'get',
    path: '/webhooks/:id',
    summary: 'Get a webhook endpoint',
    tags: ['Webhooks'],
    scope: 'webhooks:read',
    params: idParams,
    errors: ['not_found'],
    responses: { 200: { description: 'The endpoint', schema: z.object({ data: WebhookEndpointSchema }) } },
    handler: async ({ params, auth, deps }) => {
      const row = await findOwnEndpoint(deps.db, auth.userId, params.id);
      if (!row) throw notFound(params.id);
      return { status: 200, body: { data: toWebhookEndpointView(row) } };
    },
  }),
  defineRoute({
    method: 'patch',
    path: '/webhooks/:id',
    summary: 'Change a webhook endpoint',
    description: '`events: null` delivers every type again. `enabled: true` switches an endpoint Herald disabled back on and clears `disabled_reason`.',
    tags: ['Webhooks'],
    scope: 'webhooks:write',
    params: idParams,
    body: changeBody,
    errors: ['bad_request', 'not_found'],
    responses: { 200: { description: 'The endpoint', schema: z.object({ data: WebhookEndpointSchema }) } },
    handler: async ({ params, body, auth, deps }) => {
      const changed = await changeEndpoint(webhooksDeps(deps), auth.userId, params.id, body);
      if (!changed.ok) throw new ApiError('bad_request', changed.message);
      if (!changed.endpoint) throw notFound(params.id);
      return { status: 200, body: { data: toWebhookEndpointView(changed.endpoint) } };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/webhooks/:id',
    summary: 'Delete a webhook endpoint',
    tags: ['Webhooks'],
    scope: 'webhooks:write',
    params: idParams,
    errors: ['not_found'],
    responses: { 200: { description: 'The endpoint as it was; nothing more is delivered to it', schema: z.object({ data: WebhookEndpointSchema }) } },
    handler: async ({ params, auth, deps }) => {
      const deleted = await deleteOwnEndpoint(deps.db, auth.userId, params.id);
      if (!deleted) throw notFound(params.id);
      return { status: 200, body: { data: toWebhookEndpointView(deleted) } };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/webhooks/:id/rotate-secret',
    summary: "Rotate a webhook endpoint's secret",
    description:
      'The new secret is shown once. The previous one keeps signing beside it for 24 hours, and so does every secret rotated out in the 24 hours before (one signature each in `webhook-signature`; at most three rotated-out secrets sign, so a fourth rotation within a day stops the oldest).',
    tags: ['Webhooks'],
    scope: 'webhooks:write',
    params: idParams,
    errors: ['not_found'],
    responses: { 200: { description: 'The endpoint, with its new secret', schema: z.object({ data: WithSecretSchema }) } },
    handler: async ({ params, auth, deps }) => {
      const rotated = await rotateSecret(webhooksDeps(deps), auth.userId, params.id);
      if (!rotated) throw notFound(params.id);
      return { status: 200, body: { data: { ...toWebhookEndpointView(rotated.endpoint), secret: rotated.secret } } };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/webhooks/:id/test',
    summary: 'Send a test event',
    description:
      'Writes a `webhook.test` event and delivers it to this endpoint only (on the usual schedule); its attempts show in `/deliveries`. One test at a time per endpoint: while an earlier one is still being tried, this answers that event with `meta.already_in_flight: true` and starts nothing; if it is waiting for its next retry, that retry goes at once (not sooner than 5 s after its last attempt). A switched-off endpoint is 400 `bad_request`.',
    tags: ['Webhooks'],
    scope: 'webhooks:write',
    params: idParams,
    errors: ['not_found'],
    responses: { 202: { description: 'The event being delivered', schema: SentSchema } },
    handler: async ({ params, auth, deps }) => {
      const sent = await sendTestEvent(sendDeps(deps), auth.userId, params.id);
      if (!sent.ok) throw sendRefusal(params.id, sent);
      return { status: 202, body: { data: toEventView(sent.event), meta: { already_in_flight: sent.alreadyInFlight } } };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/webhooks/:id/redeliver',
    summary: 'Send an event again',
    description:
      'Delivers the event to this endpoint again now, with the same `webhook-id`, whatever its types, on the usual retry schedule. One redelivery of an event to an endpoint at a time: while an earlier one is still being tried, this answers `meta.already_in_flight: true` and starts nothing; if it is waiting for its next retry, that retry goes at once (not sooner than 5 s after its last attempt). Another user\'s event is 404; a switched-off endpoint is 400 `bad_request`.',
    tags: ['Webhooks'],
    scope: 'webhooks:write',
    params: idParams,
    body: z.strictObject({ event_id: z.string().min(1, 'must not be empty') }),
    errors: ['not_found'],
    responses: { 202: { description: 'The event being delivered', schema: SentSchema } },
    handler: async ({ params, body, auth, deps }) => {
      const sent = await redeliverEvent(sendDeps(deps), auth.userId, params.id, body.event_id);
      if (!sent.ok) throw sendRefusal(params.id, sent, body.event_id);
      return { status: 202, body: { data: toEventView(sent.event), meta: { already_in_flight: sent.alreadyInFlight } } };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/webhooks/:id/deliveries',
    summary: "List an endpoint's delivery attempts",
    description:
      'Newest first, kept 30 days: each attempt with its id, event, time, status code or error, and duration. `meta.has_more` says whether older attempts follow; pass the last `id` of a page as `after` for the next one. `event_id` lists one event\'s attempts only.',
    tags: ['Webhooks'],
    scope: 'webhooks:read',
    params: idParams,
    query: z.strictObject({
      after: z.uuid('must be a delivery attempt id').optional().meta({ description: 'The last id of the previous page: the attempts older than it follow' }),
      event_id: z.string().min(1).max(100).optional().meta({ description: 'Only the attempts to deliver this event' }),
      limit: queryInteger({ min: 1, max: 100 }).optional().meta({ description: 'Default 50, max 100' }),
    }),
    errors: ['not_found'],
    responses: { 200: { description: 'A page of attempts', schema: z.object({ data: z.array(DeliverySchema), meta: z.object({ has_more: z.boolean() }) }) } },
    handler: async ({ params, query, auth, deps }) => {
      const endpoint = await findOwnEndpoint(deps.db, auth.userId, params.id);
      if (!endpoint) throw notFound(params.id);
      const limit = query.limit ?? 50;
      const rows = await listDeliveries(deps.db, endpoint.id, { after: query.after, eventId: query.event_id, limit: limit + 1 });
      const data = rows
        .slice(0, limit)
        .map((r) => ({ id: r.id, event_id: r.event_id, attempted_at: r.attempted_at.toISOString(), status_code: r.status_code, error: r.error, duration_ms: r.duration_ms, delivered: r.delivered }));
      return { status: 200, body: { data, meta: { has_more: rows.length > limit } } };
    },
  }),
];
