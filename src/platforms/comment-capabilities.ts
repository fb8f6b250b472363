import { capabilities, noComments, type CommentCapabilities } from './capabilities';
import type { PlatformSlug } from './types';

/**
 * What the capability table (`capabilities.ts`) answers for one account's comments: the comment actions of its
 * kind of account where they differ from its platform's, and the comment a reply to another is filed under.
 */

/** The platform comment a reply to `answered` is filed under: the answered comment, or its top-level comment where comments nest one level. */
export function replyParentOf(platform: PlatformSlug, answered: { platform_comment_id: string; platform_parent_id: string | null }): string {
  return (capabilities[platform].repliesNestOneLevel && answered.platform_parent_id) || answered.platform_comment_id;
}

/** Comment capabilities that differ by the kind of account (publishing-api.md "Capabilities by platform"). */
const accountCommentCapabilities: Partial<Record<PlatformSlug, Readonly<Record<string, CommentCapabilities>>>> = {
  // A LinkedIn member profile has no comment read, reply or delete; Pages have them.
  linkedin: { profile: noComments },
};

/** The comment capabilities of one account (`kind` from AccountIdentity: 'profile' | 'page'). */
export function commentCapabilitiesFor(platform: PlatformSlug, account: { kind?: string | null } = {}): CommentCapabilities {
  return (account.kind && accountCommentCapabilities[platform]?.[account.kind]) || capabilities[platform].comments;
}
