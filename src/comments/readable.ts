import { ApiError } from '../errors';
import { platformName, requireAvailablePlatform } from '../platforms/availability';
import { commentCapabilitiesFor, type CommentCapabilities } from '../platforms/capabilities';
import type { PlatformSlug } from '../platforms/types';

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
