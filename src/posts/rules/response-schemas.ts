import { z } from 'zod';
import { platformSlugs } from '../../platforms/types';
import { postStatuses } from '../../db/tables/posts';
import { WarningEntrySchema } from './warnings';

/**
 * Response shapes of the posts and threads routes (publishing-api.md "Post object", "First comment object",
 * "Fan-out result", "Warning entry", "Thread rollback object"; decisions.md "Threads").
 */

const timestamp = z.string().describe('ISO 8601, UTC, millisecond precision');

export const FirstCommentSchema = z
  .object({
    text: z.string(),
    status: z.enum(['pending', 'posted', 'failed']),
    comment_id: z.string().nullable(),
    error: z.string().nullable(),
  })
  .meta({ id: 'FirstComment' });

/** Populated form of `media_urls` (the spec leaves it open): one entry per item, in the order given. */
export const PostMediaSchema = z
  .object({
    url: z.string().nullable().describe('The URL the client gave; null for an upload'),
    media_id: z.string().nullable().describe('The upload id the client gave; null for a URL'),
    alt: z.string().nullable(),
  })
  .meta({ id: 'PostMedia' });

export const PostSchema = z
  .object({
    id: z.string(),
    platform: z.enum(platformSlugs),
    account_id: z.string().nullable(),
    text: z.string(),
    media_urls: z.array(PostMediaSchema).nullable(),
    first_comment: FirstCommentSchema.nullable(),
    platform_post_id: z.string().nullable(),
    platform_post_url: z.string().nullable(),
    status: z.enum(postStatuses),
    scheduled_at: timestamp.nullable(),
    published_at: timestamp.nullable(),
    thread_id: z.string().nullable(),
    thread_order: z.number().int().nullable(),
    group_id: z.string().nullable(),
    error_message: z.string().nullable(),
    retry_count: z.number().int(),
    created_at: timestamp,
    hidden: z.boolean(),
    warnings: z.array(WarningEntrySchema).optional().describe('Present on every draft response'),
    promoted_from_draft_id: z.string().optional(),
    rescheduled_post_ids: z.array(z.string()).optional().describe('On an update response when schedule_at was given'),
  })
  .meta({ id: 'Post' });
export type PostPayload = z.infer<typeof PostSchema>;

const ResultErrorSchema = z.object({ code: z.string(), message: z.string() }).catchall(z.unknown());

export const FanOutResultSchema = z
  .object({
    account_id: z.string(),
    platform: z.enum(platformSlugs),
    success: z.boolean(),
    post_id: z.string().nullable(),
    platform_post_url: z.string().nullable(),
    status: z.enum(postStatuses).nullable(),
    post: PostSchema.nullable(),
    error: ResultErrorSchema.nullable(),
  })
  .meta({ id: 'FanOutResult' });

export const FanOutResponseSchema = z
  .object({ group_id: z.string(), results: z.array(FanOutResultSchema) })
  .meta({ id: 'FanOutResponse' });

/** A thread on one account: its parts in `thread_order`. */
export const ThreadSchema = z
  .object({
    thread_id: z.string(),
    posts: z.array(PostSchema),
    promoted_from_draft_ids: z.array(z.string()).optional(),
  })
  .meta({ id: 'Thread' });

/** In a thread fan-out, each result carries `thread_id` and `posts` instead of `post` (`post_id` and `platform_post_url` are the first part's). */
export const ThreadFanOutResultSchema = FanOutResultSchema.omit({ post: true })
  .extend({
    thread_id: z.string().nullable(),
    posts: z.array(PostSchema).nullable(),
  })
  .meta({ id: 'ThreadFanOutResult' });

export const ThreadFanOutResponseSchema = z
  .object({ group_id: z.string(), results: z.array(ThreadFanOutResultSchema) })
  .meta({ id: 'ThreadFanOutResponse' });

export const ThreadRollbackSchema = z
  .object({
    platform: z.enum(platformSlugs),
    published: z.number().int(),
    rolled_back: z.array(z.string()).describe('Platform post ids removed again'),
    still_live: z.array(
      z.object({ thread_order: z.number().int(), platform_post_id: z.string(), platform_post_url: z.string().nullable() }),
    ),
    rollback_supported: z.boolean(),
    quota_refunded: z.boolean(),
  })
  .meta({ id: 'ThreadRollback' });

export const ThreadRollbackErrorSchema = z
  .object({
    error: z.object({ code: z.string(), message: z.string(), thread_rollback: ThreadRollbackSchema }),
  })
  .meta({ id: 'ThreadRollbackError' });

export const DeletePostResponseSchema = z.object({
  id: z.string(),
  deleted: z.literal(true),
  cancelled_ids: z.array(z.string()).optional(),
  deleted_ids: z.array(z.string()).optional(),
});

export const HidePostResponseSchema = z.object({ id: z.string(), hidden: z.boolean(), hidden_ids: z.array(z.string()) });
