import type { ColumnType, Generated } from 'kysely';

export type ReservationKind = 'post' | 'scheduled' | 'first_comment' | 'x_link' | 'x_link_first_comment';
type ReservationState = 'reserved' | 'spent' | 'refunded';

interface UsageMonthsTable {
  user_id: string;
  /** `YYYY-MM`, UTC. */
  month: string;
  posts: Generated<number>;
  scheduled: Generated<number>;
  overage: Generated<number>;
  x_link_posts: Generated<number>;
  /** Comment refreshes this month (migration 0060). */
  comment_syncs: Generated<number>;
  /** Replies x returned to comment refreshes this month (migration 0060). */
  x_comment_reads: Generated<number>;
}

interface QuotaReservationsTable {
  user_id: string;
  post_id: string;
  month: string;
  kind: ReservationKind;
  state: Generated<ReservationState>;
  overage: Generated<boolean>;
  created_at: ColumnType<Date, Date | string | undefined, never>;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export interface QuotaTables {
  usage_months: UsageMonthsTable;
  quota_reservations: QuotaReservationsTable;
}

