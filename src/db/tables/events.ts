import type { ColumnType, Selectable } from 'kysely';
import type { EventType } from '../../events/catalogue';
import type { RequestOrigin } from '../../events/request-origin';

type Json<T> = ColumnType<T, string, never>;

/** The events outbox (migration 0090); only `dispatched_at` is ever updated; rows go after 30 days. */
interface EventsTable {
  id: string;
  user_id: string;
  type: EventType;
  data: Json<Record<string, unknown>>;
  request: Json<RequestOrigin | null>;
  created_at: ColumnType<Date, Date | string | undefined, never>;
  /** The dispatcher started its delivery workflows (migration 0093). */
  dispatched_at: ColumnType<Date | null, never, Date | null>;
}

export interface EventsTables {
  events: EventsTable;
}

export type EventRow = Selectable<EventsTable>;
