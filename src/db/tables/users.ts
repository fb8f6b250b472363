import type { ColumnType, Generated, Selectable } from 'kysely';
import type { PlanName } from '../../plans';

interface UsersTable {
  id: Generated<string>;
  email: string | null;
  plan: PlanName;
  /** Custom numbers for plans whose quotas are custom (scale, enterprise); null = not set. */
  post_quota: number | null;
  scheduled_quota: number | null;
  account_limit: number | null;
  comment_sync_quota: number | null;
  x_comment_read_quota: number | null;
  created_at: ColumnType<Date, Date | string | undefined, never>;
}

export interface UsersTables {
  users: UsersTable;
}

export type User = Selectable<UsersTable>;
