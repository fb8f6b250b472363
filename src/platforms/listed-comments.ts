import { isAcceptedInstant } from '../db/timestamp';
import type { CommentPage, PlatformComment, ReadMemo, UnreadableComments } from './types';

/** One page's comments as Herald reads them, with what it could not read if anything (`CommentPage` without its cursor). */
export type ListedComments = Pick<CommentPage, 'comments' | 'unreadable'>;

/**
 * Maps one page of a platform's comment listing, leaving out a comment the platform answered malformed: its mapper
 * throws (a missing field it relies on, e.g. Graph's `created_time`), its id is empty or holds a U+0000 (PostgreSQL
 * text cannot store one, and the id addresses the platform, so it is not rewritten), or its time does not read. One
 * odd comment must not fail the whole refresh: a mapper's throw is no platform answer the sync can back off from
 * (README "Comment listing and sync", 2026-12-07). `createdAt` comes back as `toISOString`, whatever form the
 * platform wrote it in.
 *
 * A comment left out is still on the platform: its id (`idOf` reads it from the raw item when the mapper threw) is
 * reported in `unreadable` (absent when there is none), so the sync does not take a stored comment that now comes
 * back malformed for deleted; one without a usable id is counted, and a read holding one concludes no deletion
 * (README, 2026-12-07, fix-comment-sync-two).
 */
export function listedComments<T>(items: readonly T[], toComment: (item: T) => PlatformComment, idOf: (item: T) => unknown): ListedComments {
  const comments: PlatformComment[] = [];
  const unreadable: UnreadableComments = { ids: [], unidentified: 0 };
  const leftOut = (id: unknown) => {
    if (usableId(id)) unreadable.ids.push(id as string);
    else unreadable.unidentified += 1;
  };
  for (const item of items) {
    let comment: PlatformComment;
    try {
      comment = toComment(item);
    } catch {
      leftOut(safely(() => idOf(item)));
      continue;
    }
    const createdAt = new Date(typeof comment.createdAt === 'string' ? comment.createdAt : NaN);
    const readable = !Number.isNaN(createdAt.getTime()) && isAcceptedInstant(createdAt);
    if (!readable || !usableId(comment.platformCommentId) || (comment.platformParentId !== null && !usableId(comment.platformParentId))) {
      leftOut(comment.platformCommentId);
      continue;
    }
    comments.push({ ...comment, createdAt: createdAt.toISOString() });
  }
  return withUnreadable(comments, unreadable);
}

/** Several mapped lists as one page (a platform whose page holds comments and their replies read apart). */
export function joinListed(parts: readonly ListedComments[]): ListedComments {
  return withUnreadable(parts.flatMap((p) => p.comments), {
    ids: parts.flatMap((p) => p.unreadable?.ids ?? []),
    unidentified: parts.reduce((n, p) => n + (p.unreadable?.unidentified ?? 0), 0),
    subtrees: parts.flatMap((p) => p.unreadable?.subtrees ?? []),
  });
}

/**
 * A mapped list with the entries a platform listed without showing them or their replies (`subtrees`; an entry with
 * no usable id is counted `unidentified`, so the read concludes no deletion).
 */
export function withUnshownSubtrees(listed: ListedComments, unshown: readonly unknown[]): ListedComments {
  if (unshown.length === 0) return listed;
  const ids = unshown.filter(usableId) as string[];
  return withUnreadable(listed.comments, {
    ids: listed.unreadable?.ids ?? [],
    unidentified: (listed.unreadable?.unidentified ?? 0) + (unshown.length - ids.length),
    subtrees: [...(listed.unreadable?.subtrees ?? []), ...ids],
  });
}

function withUnreadable(comments: PlatformComment[], unreadable: UnreadableComments): ListedComments {
  const { subtrees, ...rest } = unreadable;
  if (subtrees?.length) return { comments, unreadable: { ...rest, subtrees } };
  return rest.ids.length > 0 || rest.unidentified > 0 ? { comments, unreadable: rest } : { comments };
}

/**
 * `ReadMemo` for one read: bluesky and mastodon list a post's whole reply tree in one answer and Herald pages it, so
 * every page used to fetch the tree again (a refresh of 2,000 replies made 40 calls against the platform's rate limit
 * for one answer; README, 2026-12-07, fix-comment-sync-two). A failed fetch is forgotten, so the next asks again.
 */
export class ListingMemo implements ReadMemo {
  private readonly answers = new Map<string, Promise<unknown>>();

  once<T>(key: string, fetch: () => Promise<T>): Promise<T> {
    let answer = this.answers.get(key) as Promise<T> | undefined;
    if (!answer) {
      answer = fetch();
      this.answers.set(key, answer);
      answer.catch(() => this.answers.delete(key));
    }
    return answer;
  }
}

function safely(read: () => unknown): unknown {
  try {
    return read();
  } catch {
    return undefined;
  }
}

function usableId(id: unknown): boolean {
  return typeof id === 'string' && id !== '' && !id.includes('\u0000');
}
