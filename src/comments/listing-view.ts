import { z } from 'zod';
import type { CommentRow } from '../db/tables/comments';
import { platformSlugs } from '../platforms/types';

/**
 * The Comment object of publishing-api.md: its zod schema (for OpenAPI) and the one mapping from a `comments` row.
 * Every route that returns a comment (listing, reply, hide) uses `toCommentView`.
 */

const timestamp = z.string().meta({ description: 'ISO 8601, UTC, millisecond precision' });

export const CommentSchema = z
  .object({
    id: z.string().meta({ description: "Service's comment id; used as :comment_id in routes" }),
    post_id: z.string(),
    platform: z.enum(platformSlugs),
    platform_comment_id: z.string().meta({ description: "The platform's id; used as the parent_id filter value" }),
    platform_parent_id: z.string().nullable(),
    author: z.object({ handle: z.string(), display_name: z.string(), platform_id: z.string(), avatar_url: z.string().nullable() }),
    text: z.string(),
    created_at: timestamp,
    likes: z.number().int(),
    replies: z.number().int(),
    hidden: z.boolean(),
    deleted: z.boolean(),
    own: z.boolean(),
    replied: z.boolean(),
    replied_at: timestamp.nullable(),
    reply_comment_id: z.string().nullable(),
  })
  .meta({ id: 'Comment' });

export type CommentView = z.infer<typeof CommentSchema>;

export function toCommentView(row: CommentRow): CommentView {
  return {
    id: row.id,
    post_id: row.post_id,
    platform: row.platform,
    platform_comment_id: row.platform_comment_id,
    platform_parent_id: row.platform_parent_id,
    author: { handle: row.author_handle, display_name: row.author_display_name, platform_id: row.author_platform_id, avatar_url: row.author_avatar_url },
    text: row.text,
    created_at: row.created_at.toISOString(),
    likes: row.likes,
    replies: row.replies,
    hidden: row.hidden,
    deleted: row.deleted,
    own: row.own,
    replied: row.replied,
    replied_at: row.replied_at ? row.replied_at.toISOString() : null,
    reply_comment_id: row.reply_comment_id,
  };
}
