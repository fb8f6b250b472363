import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';
import type { RequestOrigin } from '../../events/request-origin';
import type { PlatformSlug } from '../../platforms/types';

export const postStatuses = ['draft', 'scheduled', 'publishing', 'published', 'failed', 'deleted'] as const;
export type PostStatus = (typeof postStatuses)[number];
export type FirstCommentStatus = 'pending' | 'posted' | 'failed';

/** One entry of the `media` column: the media as the client asked for it, and where its checked bytes are stored. */
export interface StoredMediaRef {
  url?: string;
  media_id?: string;
  alt?: string;
}

type Json<T> = ColumnType<T, string | null | undefined, string | null>;

interface PostsTable {
  id: Generated<string>;
  user_id: string;
  account_id: string | null;
  platform: PlatformSlug;
  text: Generated<string>;
  media: Json<StoredMediaRef[] | null>;
  first_comment_text: string | null;
  first_comment_status: FirstCommentStatus | null;
  first_comment_comment_id: string | null;
  first_comment_error: string | null;
  /** The platform's id of the posted first comment (migration 0040). */
  first_comment_platform_id: string | null;
  /** The workflow publishing this row when not its own or its thread's: `group-<groupId>` (migration 0052). */
  workflow_id: string | null;
  /** The first comment's platform call began and has not reported back (migration 0053). */
  first_comment_attempt_started_at: Date | null;
  /** A platform call began and has not reported back (migration 0050): look before sending again. */
  publish_attempt_started_at: Date | null;
  /**
   * While that mark is set: the start of the earliest call whose outcome is still open, which the look before sending
   * again searches back to (migration 0276; null on rows marked before it: their mark).
   */
  publish_attempt_first_at: Date | null;
  /** What the adapter recorded with that open attempt, opaque here (migration 0250, `PublishRequest.attempt`). */
  publish_attempt_handle: string | null;
  /** A failed attempt's retry is not made before this (the workflow's clock); null when none waits (migration 0220). */
  next_attempt_at: Date | null;
  configuration: Json<Record<string, unknown> | null>;
  platform_post_id: string | null;
  platform_post_url: string | null;
  /** Its link could not be read at publish time: the next GET asks the platform once more (migration 0210). */
  platform_post_url_unread: Generated<boolean>;
  status: PostStatus;
  scheduled_at: Date | null;
  /** Times the API moved `scheduled_at` (`moveScheduledTime`); a held post's claim requires the one it read (migration 0252). */
  schedule_version: Generated<number>;
  timezone: string | null;
  published_at: Date | null;
  thread_id: string | null;
  thread_order: number | null;
  group_id: string | null;
  error_message: string | null;
  retry_count: Generated<number>;
  hidden: Generated<boolean>;
  promoted_from_draft_id: string | null;
  promoted_to_id: string | null;
  /** The API request this post's next worker-side outcome reports; null for scheduled work (migration 0090). */
  request_origin: Json<RequestOrigin | null>;
  created_at: ColumnType<Date, Date | string | undefined, never>;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export interface PostsTables {
  posts: PostsTable;
}

export type PostRow = Selectable<PostsTable>;
export type NewPostRow = Insertable<PostsTable>;
export type PostUpdate = Updateable<PostsTable>;
