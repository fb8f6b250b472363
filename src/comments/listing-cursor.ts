import { ApiError } from '../errors';
import { isAcceptedInstant } from '../db/timestamp';
import { isUuid } from '../db/uuid';

/**
 * The listing's `next_cursor`: the position of the last comment of a page, (created_at, id), and the post it
 * belongs to, as base64url JSON. Opaque to clients (publishing-api.md: "never parsed or built"); anything that does
 * not decode to a position in this post's listing is 400 `bad_request`.
 */

export function encodeCursor(postId: string, last: { created_at: Date; id: string }): string {
  return Buffer.from(JSON.stringify({ p: postId, t: last.created_at.toISOString(), i: last.id })).toString('base64url');
}

export function decodeCursor(cursor: string, postId: string): { createdAt: string; id: string } {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    value = undefined;
  }
  const v = value as { p?: unknown; t?: unknown; i?: unknown } | undefined;
  const valid =
    typeof v === 'object' && v !== null && typeof v.p === 'string' && typeof v.t === 'string' && typeof v.i === 'string' && isUuid(v.i) && isWrittenTime(v.t);
  if (!valid) throw new ApiError('bad_request', 'cursor: not a cursor from this listing; pass meta.next_cursor of the previous page as it is');
  if (v.p !== postId) throw new ApiError('bad_request', 'cursor: belongs to the comments of another post');
  return { createdAt: v.t as string, id: v.i as string };
}

// The listing casts the time to timestamptz, so only what encodeCursor writes passes: toISOString's form, in the
// accepted years. Date.parse alone took "1", "March 7" or "+275760-09-13", which the cast refused with a 500.
const WRITTEN_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function isWrittenTime(t: string): boolean {
  const at = new Date(Date.parse(t));
  return WRITTEN_TIME.test(t) && isAcceptedInstant(at) && at.toISOString() === t;
}
