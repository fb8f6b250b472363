import { z } from 'zod';
import { eventTypes } from '../../src/events/catalogue';
import { findOwnEvent, listOwnEvents } from '../../src/events/repository';
import { EventSchema, toEventView } from '../../src/events/view';
import { ApiError } from '../../src/errors';
import { defineRoute } from '../route';
import { idParams, queryInteger } from '../validation';

/** decisions.md "Events and webhooks": the events a user's changes wrote, kept 30 days. Scope `webhooks:read`. */

const listEventsQuery = z.strictObject({
  type: z.enum(eventTypes, { error: `must be one of ${eventTypes.join(', ')}` }).optional(),
  after: z
    .string()
    .regex(/^evt_[0-9A-HJKMNP-TV-Z]{26}$/, 'must be an event id (evt_ + 26 characters)')
    .optional()
    .meta({ description: 'The last id of the previous page: the events older than it follow' }),
  limit: queryInteger({ min: 1, max: 100 }).optional().meta({ description: 'Page size, default 20, max 100' }),
});

export const eventsRoutes = [
  defineRoute({
    method: 'get',
    path: '/events',
    summary: 'List events',
    description:
      'Newest first. `meta.has_more` says whether older events follow; pass the last id of a page as `after` for the next one. Events are kept 30 days. ' +
      'Ids sort by when the event was made, which can be a moment before it is stored: an event can appear below one already read. ' +
      'A poller should not stop at the newest event it saw: read on past it until events `created_at` 5 minutes before that one, and skip ids already seen. Webhooks deliver every event.',
    tags: ['Events'],
    scope: 'webhooks:read',
    query: listEventsQuery,
    responses: { 200: { description: 'A page of events', schema: z.object({ data: z.array(EventSchema), meta: z.object({ has_more: z.boolean() }) }) } },
    handler: async ({ query, auth, deps }) => {
      const limit = query.limit ?? 20;
      const rows = await listOwnEvents(deps.db, auth.userId, { type: query.type, after: query.after, limit: limit + 1 });
      return { status: 200, body: { data: rows.slice(0, limit).map(toEventView), meta: { has_more: rows.length > limit } } };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/events/:id',
    summary: 'Get an event',
    description: "Another user's event, or one older than 30 days, is 404.",
    tags: ['Events'],
    scope: 'webhooks:read',
    params: idParams,
    errors: ['not_found'],
    responses: { 200: { description: 'The event', schema: z.object({ data: EventSchema }) } },
    handler: async ({ params, auth, deps }) => {
      const row = await findOwnEvent(deps.db, auth.userId, params.id);
      if (!row) throw new ApiError('not_found', `Event ${params.id.slice(0, 100)} not found`);
      return { status: 200, body: { data: toEventView(row) } };
    },
  }),
];
