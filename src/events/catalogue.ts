/**
 * Every event type (decisions.md "Events and webhooks"), the one list the outbox, the events API and webhook
 * subscriptions validate against. `comment.received` joins when the comments inbox lands (one event per sync).
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
  'account.connection_lost',
  'webhook.test',
] as const;

export type EventType = (typeof eventTypes)[number];
