import { ApiError } from '../errors';
import { platformName } from '../platforms/availability';
import type { CommentCapabilities } from '../platforms/capabilities';
import type { PlatformSlug } from '../platforms/types';

/** 501 `comments_unsupported` where the platform (or this kind of account on it) exposes no comment read. */
export function requireReadableComments(platform: PlatformSlug, accountKind: string | null | undefined, caps: CommentCapabilities): void {
  if (caps.list) return;
  throw new ApiError('comments_unsupported', `${platformName(platform)}${accountKind === 'profile' ? ' profiles' : ''} expose no comments Herald can read.`);
}
