import type { ColumnType, Selectable } from 'kysely';
import type { PostMetrics } from '../../platforms/types';

interface PostAnalyticsTable {
  post_id: string;
  /** Null until the first platform read succeeds (migration 0070). */
  metrics: ColumnType<PostMetrics | null, string | null | undefined, string | null>;
  synced_at: Date | null;
  /** The 5-minute floor: no platform read for this post before this time; a failed read sets it too, without metrics (migration 0262). */
  next_refresh_after: Date | null;
  /** A platform read in flight, claimed by one request in one API process. */
  refresh_claim_id: string | null;
  refresh_claimed_at: Date | null;
  created_at: ColumnType<Date, Date | string | undefined, never>;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export interface AnalyticsTables {
  post_analytics: PostAnalyticsTable;
}

export type PostAnalyticsRow = Selectable<PostAnalyticsTable>;
