import type { ColumnType, Generated, Selectable } from 'kysely';
import type { EventType } from '../../events/catalogue';

/** A rotated-out secret: sealed as the current one is, signing until `expires_at` (an ISO time). */
export interface RetiredSecret {
  sealed: string;
  expires_at: string;
}

/** Webhook endpoints (migration 0091); secrets are sealed (`src/webhooks/secrets.ts`). */
interface WebhookEndpointsTable {
  id: Generated<string>;
  user_id: string;
  url: string;
  /** Null = every event type. */
  events: EventType[] | null;
  description: string | null;
  enabled: Generated<boolean>;
  disabled_reason: string | null;
  secret_sealed: string;
  /** Rotated-out secrets still signing, newest first, at most three (migration 0240); read through `signingSecrets`. */
  retired_secrets: ColumnType<RetiredSecret[], never, RetiredSecret[]>;
  /** When the current run of failed attempts began; null after a success (migration 0092). */
  failing_since: Date | null;
  created_at: ColumnType<Date, Date | string | undefined, never>;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

/** One delivery attempt (migration 0092). */
interface WebhookDeliveriesTable {
  id: Generated<string>;
  endpoint_id: string;
  event_id: string;
  attempted_at: Date;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  delivered: boolean;
}

/** Where the delivery of one event to one endpoint stands (migration 0094); settled once it needs no more attempts. */
interface WebhookDispatchesTable {
  event_id: string;
  endpoint_id: string;
  attempts: Generated<number>;
  next_attempt_at: Generated<Date>;
  settled_at: Date | null;
}

export interface WebhooksTables {
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_dispatches: WebhookDispatchesTable;
}

export type WebhookEndpointRow = Selectable<WebhookEndpointsTable>;
