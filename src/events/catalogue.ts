/**
 * Every event type (decisions.md "Events and webhooks"), the one list the outbox, the events API and webhook
 * subscriptions validate against.
 */
export const eventTypes = [
  'post.published',
  'post.failed',
  'post.cancelled',
  'post.deleted',
  'thread.published',
  'thread.failed',
  'first_comment.posted',
  'first_comment.failed',
  'comment.received',
  'account.connection_lost',
  'webhook.test',
] as const;

export type EventType = (typeof eventTypes)[number];
