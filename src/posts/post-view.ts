import { z } from 'zod';
import type { AccountRow } from '../db/tables/accounts';
import { type PostRow, postStatuses } from '../db/tables/posts';
import { platformSlugs } from '../platforms/types';

/**
 * The post object of publishing-api.md ("Post object"): its zod schema (for OpenAPI) and the one mapping from a
 * `posts` row to it. Every route that returns a post uses `toPostView`.
 */

const timestamp = z.string().meta({ description: 'ISO 8601, UTC, millisecond precision' });

export const FirstCommentSchema = z
  .object({
    text: z.string(),
    status: z.enum(['pending', 'posted', 'failed']),
    comment_id: z.string().nullable(),
    error: z.string().nullable(),
  })
  .meta({ id: 'FirstComment' });

export const WarningSchema = z
  .object({ account_id: z.string(), platform: z.string(), code: z.string(), message: z.string() })
  .meta({ id: 'Warning' });

export const PostSchema = z
  .object({
    id: z.string(),
    platform: z.enum(platformSlugs),
    account_id: z.string().nullable().meta({ description: 'Null once the account is disconnected (the post is kept)' }),
    text: z.string(),
    media_urls: z.array(z.string()).nullable(),
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
    warnings: z.array(WarningSchema).optional().meta({ description: 'On every draft response' }),
    promoted_from_draft_id: z.string().optional(),
  })
  .meta({ id: 'Post' });

export type PostView = z.infer<typeof PostSchema>;

/** The account columns the view needs (joined by listings); null when the account row is gone. */
type PostAccountState = Pick<AccountRow, 'inactive_reason'> | null;

export function toPostView(row: PostRow, account: PostAccountState): PostView {
  const view: PostView = {
    id: row.id,
    platform: row.platform,
    account_id: row.account_id === null || account === null || account.inactive_reason === 'disconnected' ? null : row.account_id,
    text: row.text,
    media_urls: mediaUrls(row),
    first_comment:
      row.first_comment_text === null
        ? null
        : {
            text: row.first_comment_text,
            status: row.first_comment_status ?? 'pending',
            comment_id: row.first_comment_comment_id,
            error: row.first_comment_error,
          },
    platform_post_id: row.platform_post_id,
    platform_post_url: row.platform_post_url,
    status: row.status,
    scheduled_at: iso(row.scheduled_at),
    published_at: iso(row.published_at),
    thread_id: row.thread_id,
    thread_order: row.thread_order,
    group_id: row.group_id,
    error_message: row.error_message,
    retry_count: row.retry_count,
    created_at: row.created_at.toISOString(),
    hidden: row.hidden,
  };
  if (row.promoted_from_draft_id !== null) view.promoted_from_draft_id = row.promoted_from_draft_id;
  return view;
}

function mediaUrls(row: PostRow): string[] | null {
  if (row.media === null || row.media.length === 0) return null;
  // Uploads (media ids) have no URL of the client's to echo: a post with only uploads shows null.
  const urls = row.media.map((item) => item.url).filter((url): url is string => typeof url === 'string');
  return urls.length === 0 ? null : urls;
}

function iso(value: Date | null): string | null {
  return value === null ? null : value.toISOString();
}
