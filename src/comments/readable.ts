import { ApiError } from '../errors';
import { platformName, requireAvailablePlatform } from '../platforms/availability';
import type { CommentCapabilities } from '../platforms/capabilities';
import { commentCapabilitiesFor } from '../platforms/comment-capabilities';
import type { PostRow } from '../db/tables/posts';
import type { PlatformSlug } from '../platforms/types';

const notPublishedReasons: Partial<Record<PostRow['status'], string>> = {
  deleted: 'This post was deleted; its comments are no longer refreshed. The comments shown were stored before.',
  failed: 'This post was never published, so it has no comments.',
};

/**
 * Why a post that is not `published` reads no comments: a listing's `sync.reason` (status `unsupported`), and the
 * start of a refused reply or hide (publishing-api.md line 3: comment actions are on published posts).
 */
export function notPublishedReason(status: PostRow['status']): string {
  return notPublishedReasons[status] ?? 'This post is not published yet; its comments are read once it is.';
}

/**
 * The comment capabilities of a post's account, for a route that reads or acts on its comments: 501
 * `comments_unsupported` where the platform (or this kind of account on it: LinkedIn member profiles) exposes no
 * comment read, and only then 501 `platform_coming_soon` under a `platform:comments` flag. A read that will never
 * exist is not "coming soon" (publishing-api.md, "Capabilities by platform": LinkedIn profiles read none).
 */
export function commentCapabilitiesOrRefuse(platform: PlatformSlug, account: { kind?: string | null } | undefined, comingSoon: ReadonlySet<string>): CommentCapabilities {
  const caps = commentCapabilitiesFor(platform, account ?? {});
  if (!caps.list) {
    throw new ApiError('comments_unsupported', `${platformName(platform)}${account?.kind === 'profile' ? ' profiles' : ''} expose no comments Herald can read.`);
  }
  requireAvailablePlatform(platform, comingSoon, 'comments');
  return caps;
}

/**
 * A later part of a thread on a platform that hides top-level replies only (Threads): the part is a reply to the part
 * before, so what answers it is nested below the first part, and the platform refuses to hide any of it. The listing
 * reports `hide: false` for such a post, and a hide is refused naming why (`requireCapability`).
 */
export function hidesNothingOnPart(post: Pick<PostRow, 'thread_order'>, caps: CommentCapabilities): boolean {
  return caps.hideTopLevelOnly === true && (post.thread_order ?? 1) > 1;
}
