import { z } from 'zod';
import { platformSlugs } from '../../platforms/types';
import { postStatuses } from '../../db/tables/posts';
import { PostSchema } from '../post-view';

/**
 * Response shapes of the posts and threads routes besides the post itself (publishing-api.md "Fan-out result",
 * "Thread rollback object"; decisions.md "Threads").
 */

/** The post object, its first comment and the warning entry live in `../post-view.ts` (with the row mapping). */
export { FirstCommentSchema, PostSchema, WarningSchema } from '../post-view';

/** The update response: the post plus every post that moved when `schedule_at` was given, and a promoted thread's drafts. */
export const UpdatedPostSchema = PostSchema.extend({
  rescheduled_post_ids: z.array(z.string()).optional().describe('When schedule_at was given: every post that moved'),
  promoted_from_draft_ids: z.array(z.string()).optional().describe('On a promoted draft thread: every draft part, in thread_order'),
}).meta({ id: 'UpdatedPost' });

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
