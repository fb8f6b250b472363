import { isAcceptedInstant } from '../db/timestamp';
import type { PlatformComment } from './types';

/**
 * Maps one page of a platform's comment listing, leaving out a comment the platform answered malformed: its mapper
 * throws (a missing field it relies on, e.g. Graph's `created_time`), its id is empty or holds a U+0000 (PostgreSQL
 * text cannot store one, and the id addresses the platform, so it is not rewritten), or its time does not read. One
 * odd comment must not fail the whole refresh: a mapper's throw is no platform answer the sync can back off from
 * (README "Comment listing and sync", 2026-12-07). `createdAt` comes back as `toISOString`, whatever form the
 * platform wrote it in.
 */
export function listedComments<T>(items: readonly T[], toComment: (item: T) => PlatformComment): PlatformComment[] {
  const out: PlatformComment[] = [];
  for (const item of items) {
    let comment: PlatformComment;
    try {
      comment = toComment(item);
    } catch {
      continue;
    }
    const createdAt = new Date(typeof comment.createdAt === 'string' ? comment.createdAt : NaN);
    const readable = !Number.isNaN(createdAt.getTime()) && isAcceptedInstant(createdAt);
    if (!readable || !usableId(comment.platformCommentId) || (comment.platformParentId !== null && !usableId(comment.platformParentId))) continue;
    out.push({ ...comment, createdAt: createdAt.toISOString() });
  }
  return out;
}

function usableId(id: unknown): boolean {
  return typeof id === 'string' && id !== '' && !id.includes('\u0000');
}
