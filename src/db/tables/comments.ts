import type { ColumnType, Generated, Selectable } from 'kysely';
import type { PlatformSlug } from '../../platforms/types';

/** publishing-api.md "Listing meta (comments)" sync.status values. */
export const commentSyncStatuses = ['ok', 'unsupported', 'permission', 'rate_limited', 'budget', 'plan', 'error'] as const;
export type CommentSyncStatus = (typeof commentSyncStatuses)[number];

/** One stored platform comment (migration 0060). */
interface CommentsTable {
  id: Generated<string>;
  post_id: string;
  platform: PlatformSlug;
  platform_comment_id: string;
  platform_parent_id: string | null;
  author_handle: string;
  author_display_name: string;
  author_platform_id: string;
  author_avatar_url: string | null;
  text: string;
  created_at: ColumnType<Date, Date | string, Date | string>;
  likes: Generated<number>;
  replies: Generated<number>;
  hidden: Generated<boolean>;
  deleted: Generated<boolean>;
  own: Generated<boolean>;
  replied: Generated<boolean>;
  replied_at: Date | null;
  reply_comment_id: string | null;
  /** An own reply's: the reply attempt whose quota charge paid for it (migration 0271); null otherwise or before it. */
  reply_charge_id: string | null;
  first_seen_at: ColumnType<Date, Date | string | undefined, Date | string>;
  /** Start of the last complete refresh that saw it; a complete refresh marks deleted what it did not see. */
  last_seen_at: ColumnType<Date, Date | string | undefined, Date | string>;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
  /** Stored by a refresh and not yet reported in a `comment.received` event (migration 0200). */
  unreported: Generated<boolean>;
}

/** Per-post sync state: what `meta.sync` reports and what the sync workflow's windows and backoff read. */
interface CommentSyncStatesTable {
  post_id: string;
  status: Generated<CommentSyncStatus>;
  synced_at: Date | null;
  reason: string | null;
  next_sync_after: Date | null;
  consecutive_failures: Generated<number>;
  last_listed_at: Date | null;
  /** The refresh running now, and until when its claim holds (migration 0264, `claimRefresh`). */
  refresh_claim: string | null;
  refresh_claimed_until: Date | null;
  created_at: ColumnType<Date, Date | string | undefined, never>;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

/**
 * A comment reply whose quota reservation (`quota_reservations.post_id` = `charge_id`) may still be reserved
 * (migration 0261): what the reconciler needs to look for the reply when its process stopped mid-call.
 */
interface ReplyAttemptsTable {
  charge_id: string;
  user_id: string;
  post_id: string;
  comment_id: string;
  text: string;
  started_at: ColumnType<Date, Date | string | undefined, Date | string>;
  /** Looks that could not tell (migration 0279); each doubles the wait before `next_look_at`. */
  looks: ColumnType<number, number | undefined, number>;
  next_look_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** The request answered 502, unable to tell, and returned the reservation; the reconciler still looks (migration 0285). */
  untold_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

export interface CommentsTables {
  comments: CommentsTable;
  comment_sync_states: CommentSyncStatesTable;
  reply_attempts: ReplyAttemptsTable;
}

export type CommentRow = Selectable<CommentsTable>;
/** What listings and the sync's rules read; the running refresh's claim is only `claimRefresh`'s business. */
export type CommentSyncStateRow = Omit<Selectable<CommentSyncStatesTable>, 'refresh_claim' | 'refresh_claimed_until'>;
