import { listedComments, withUnshownSubtrees, type ListedComments } from '../listed-comments';
import type { PlatformComment } from '../types';

/** Herald ↔ Bluesky shapes: at-uris, public URLs, post records, threads as comment lists. No I/O here. */

export const POST_COLLECTION = 'app.bsky.feed.post';
/** Comments are read from one getPostThread answer and paged in memory (the endpoint has no cursor). */
const COMMENT_PAGE_SIZE = 50;
export const THREAD_DEPTH = 100;

export interface AtUri {
  repo: string;
  collection: string;
  rkey: string;
}

interface StrongRef {
  uri: string;
  cid: string;
}

const AT_URI = /^at:\/\/([^/]+)\/([^/]+)\/([^/?#]+)$/;

/** Parses `at://<did>/<collection>/<rkey>`; null for anything else. */
export function parseAtUri(value: string): AtUri | null {
  const m = AT_URI.exec(value);
  return m ? { repo: decodeURIComponent(m[1]), collection: m[2], rkey: m[3] } : null;
}

/** publishing-api.md "platform_post_url shapes": https://bsky.app/profile/<handle>/post/<rkey>. */
export function postUrl(handleOrDid: string, rkey: string): string {
  return `https://bsky.app/profile/${encodeURIComponent(handleOrDid)}/post/${rkey}`;
}

export function profileUrl(handle: string): string {
  return `https://bsky.app/profile/${encodeURIComponent(handle)}`;
}

export interface ImageEmbed {
  $type: 'app.bsky.embed.images';
  images: { image: unknown; alt: string; aspectRatio?: { width: number; height: number } }[];
}

interface PostRecordInput {
  text: string;
  createdAt: Date;
  facets?: unknown[];
  embed?: ImageEmbed;
  reply?: { root: StrongRef; parent: StrongRef };
}

export function postRecord(input: PostRecordInput): Record<string, unknown> {
  return {
    $type: POST_COLLECTION,
    text: input.text,
    createdAt: input.createdAt.toISOString(),
    ...(input.facets?.length ? { facets: input.facets } : {}),
    ...(input.embed ? { embed: input.embed } : {}),
    ...(input.reply ? { reply: input.reply } : {}),
  };
}

/** The reply refs for a new post answering `parent`: the parent's own root when it is a reply itself. */
export function replyRefs(parent: StrongRef, parentValue: unknown): { root: StrongRef; parent: StrongRef } {
  const root = (parentValue as { reply?: { root?: Partial<StrongRef> } } | undefined)?.reply?.root;
  return { root: root?.uri && root.cid ? { uri: root.uri, cid: root.cid } : parent, parent };
}

/** `RichText.detectFacets` leaves an empty DID on mentions it could not resolve; the official client drops them too. */
export function withoutUnresolvedMentions<T extends { features: { $type?: string; did?: string }[] }>(facets: T[] | undefined): T[] {
  return (facets ?? [])
    .map((facet) => ({ ...facet, features: facet.features.filter((f) => !(f.$type === 'app.bsky.richtext.facet#mention' && !f.did)) }))
    .filter((facet) => facet.features.length > 0);
}

// ---- comments ----------------------------------------------------------------------------------------------

interface ThreadNode {
  $type?: string;
  /** `notFoundPost` and `blockedPost` carry only this (and `notFound`/`blocked`, the blocked author): no replies. */
  uri?: string;
  post?: {
    uri: string;
    author: { did: string; handle: string; displayName?: string; avatar?: string };
    record: { text?: string; createdAt?: string };
    indexedAt: string;
    likeCount?: number;
    replyCount?: number;
  };
  replies?: ThreadNode[];
}

const THREAD_VIEW = 'app.bsky.feed.defs#threadViewPost';

/**
 * Every reply under the root, at any depth, newest first; direct replies to the post have no parent id. `readAt`: when
 * the thread was read (a reply's time is never later).
 *
 * A reply the AppView answers as `notFoundPost` or `blockedPost` (app.bsky.feed.defs, protocols.md section 2) comes
 * without its content and without its replies, and one at the depth read comes without its replies: none of that says
 * a stored comment was deleted, so each is reported as a subtree not shown (`unreadable.subtrees`): it and the stored
 * replies under it are kept as last stored. They used to be skipped, and a complete read took them for deleted.
 */
export function commentsOfThread(thread: unknown, ownDid: string, readAt: Date): ListedComments {
  const root = thread as ThreadNode;
  const found: Array<{ post: NonNullable<ThreadNode['post']>; parentUri: string | null }> = [];
  const unshown: unknown[] = [];
  const walk = (node: ThreadNode, parentUri: string | null): void => {
    for (const reply of node.replies ?? []) {
      if (reply?.$type !== THREAD_VIEW || !reply.post) {
        unshown.push(reply?.uri);
        continue;
      }
      found.push({ post: reply.post, parentUri });
      if (reply.replies === undefined && (reply.post.replyCount ?? 0) > 0) unshown.push(reply.post.uri);
      else walk(reply, reply.post.uri);
    }
  };
  if (root?.$type === THREAD_VIEW) walk(root, null);
  const listed = withUnshownSubtrees(
    listedComments(found, ({ post, parentUri }) => toComment(post, parentUri, ownDid, readAt), ({ post }) => post.uri),
    unshown,
  );
  return { ...listed, comments: listed.comments.sort(newestFirst) };
}

/**
 * A reply's time is the AppView's `indexedAt`, when it first saw the reply. The record's `createdAt` is whatever the
 * author's client wrote (years ahead or back): a reply dated ahead stayed first in every listing and passed every
 * `since` (README, 2026-12-07, fix-comment-sync-two). Without a readable `indexedAt`, `createdAt` serves, never later
 * than the read.
 */
function toComment(post: NonNullable<ThreadNode['post']>, parentUri: string | null, ownDid: string, readAt: Date): PlatformComment {
  return {
    platformCommentId: post.uri,
    platformParentId: parentUri,
    author: { handle: post.author.handle, displayName: post.author.displayName ?? post.author.handle, platformId: post.author.did, avatarUrl: post.author.avatar ?? null },
    text: post.record?.text ?? '',
    createdAt: timeOf(post, readAt),
    likes: post.likeCount ?? 0,
    replies: post.replyCount ?? 0,
    own: post.author.did === ownDid,
  };
}

function timeOf(post: NonNullable<ThreadNode['post']>, readAt: Date): string {
  const indexed = Date.parse(post.indexedAt);
  if (!Number.isNaN(indexed)) return new Date(indexed).toISOString();
  const created = Date.parse(post.record?.createdAt ?? '');
  // Unreadable both ways: left for `listedComments` to leave out.
  return Number.isNaN(created) ? '' : new Date(Math.min(created, readAt.getTime())).toISOString();
}

function newestFirst(a: PlatformComment, b: PlatformComment): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? 1 : -1;
  return a.platformCommentId < b.platformCommentId ? 1 : a.platformCommentId > b.platformCommentId ? -1 : 0;
}

/** A cursor names the last comment of the previous page, so new replies never shift a page. */
function encodeCursor(last: PlatformComment): string {
  return Buffer.from(JSON.stringify([last.createdAt, last.platformCommentId])).toString('base64url');
}

export function pageAfter(sorted: PlatformComment[], cursor: string | undefined): { comments: PlatformComment[]; nextCursor: string | null } {
  let start = 0;
  if (cursor) {
    const [createdAt, id] = decodeCursor(cursor);
    const probe = { createdAt, platformCommentId: id } as PlatformComment;
    start = sorted.findIndex((c) => newestFirst(c, probe) > 0);
    if (start < 0) start = sorted.length;
  }
  const comments = sorted.slice(start, start + COMMENT_PAGE_SIZE);
  const more = start + COMMENT_PAGE_SIZE < sorted.length;
  return { comments, nextCursor: more ? encodeCursor(comments[comments.length - 1]) : null };
}

function decodeCursor(cursor: string): [string, string] {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(value) && typeof value[0] === 'string' && typeof value[1] === 'string') return [value[0], value[1]];
  } catch {
    // fall through
  }
  throw new RangeError('not a Bluesky comment cursor');
}
