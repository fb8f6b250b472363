import { z } from 'zod';
import { capabilities } from '../capabilities';
import type { AccountIdentity, PlatformComment } from '../types';

/** Herald ↔ LinkedIn Posts / Images / Comments shapes (protocols.md section 8). */

export const DEFAULT_LINKEDIN_ORIGIN = 'https://api.linkedin.com';

export function postUrl(urn: string): string {
  return `https://www.linkedin.com/feed/update/${urn}/`;
}

export function commentUrl(postUrn: string, commentUrn: string): string {
  return `${postUrl(postUrn)}?commentUrn=${encodeURIComponent(commentUrn)}`;
}

/**
 * `commentary` is "little text": reserved characters are markup unless backslash-escaped, and unescaped ones can
 * cut the post short. Everything reserved is escaped except `#` starting a word, so hashtags stay hashtags.
 */
export function escapeLittleText(text: string): string {
  return text.replace(/[\\|{}@[\]()<>#*_~]/g, (ch, offset: number) => (ch === '#' && /[\p{L}\p{N}]/u.test(text[offset + 1] ?? '') ? ch : `\\${ch}`));
}

export interface UploadedImage {
  urn: string;
  alt?: string;
}

export function postBody(author: string, text: string, images: UploadedImage[]): Record<string, unknown> {
  const entry = (image: UploadedImage) => ({ id: image.urn, ...(capabilities.linkedin.altText && image.alt ? { altText: image.alt } : {}) });
  const body: Record<string, unknown> = {
    author,
    commentary: escapeLittleText(text),
    visibility: 'PUBLIC',
    distribution: { feedDistribution: 'MAIN_FEED', targetEntities: [], thirdPartyDistributionChannels: [] },
    lifecycleState: 'PUBLISHED',
    isReshareDisabledByAuthor: false,
  };
  if (images.length === 1) body.content = { media: entry(images[0]) };
  if (images.length > 1) body.content = { multiImage: { images: images.map(entry) } };
  return body;
}

/** What `verify` reads: the member (`GET /v2/userinfo`), its organization roles, and the organization. */
export const memberAnswer = z.object({ sub: z.string().min(1), name: z.string().optional() });
export const organizationAclsAnswer = z.object({ elements: z.array(z.object({ organization: z.string().optional(), role: z.string().optional() })).optional() });
export const organizationAnswer = z.object({ id: z.union([z.number(), z.string().min(1)]), localizedName: z.string().optional(), vanityName: z.string().optional() });

export function memberIdentity(info: { sub: string; name?: string; picture?: string }): AccountIdentity {
  const authorUrn = `urn:li:person:${info.sub}`;
  return { platformAccountId: authorUrn, username: info.name ?? info.sub, displayName: info.name ?? null, profileUrl: null, kind: 'profile', settings: { authorUrn } };
}

export function organizationIdentity(org: { id: number | string; localizedName?: string; vanityName?: string }): AccountIdentity {
  const authorUrn = `urn:li:organization:${org.id}`;
  return {
    platformAccountId: authorUrn,
    username: org.vanityName ?? String(org.id),
    displayName: org.localizedName ?? null,
    profileUrl: org.vanityName ? `https://www.linkedin.com/company/${org.vanityName}/` : null,
    kind: 'page',
    settings: { authorUrn, organizationId: String(org.id) },
  };
}

/** Roles that may post as an organization (protocols.md section 8). */
export const POSTING_ROLES = new Set(['ADMINISTRATOR', 'DIRECT_SPONSORED_CONTENT_POSTER', 'CONTENT_ADMINISTRATOR']);

/**
 * A comment as LinkedIn answers it (a listing element, `Get a Comment`, and the body of a create). Its URN names the
 * post's *activity*, `urn:li:comment:(urn:li:activity:<id>,<comment id>)`, whatever URN the post was created and
 * addressed by (`urn:li:share:` or `urn:li:ugcPost:`), and `object` is that activity URN too. Versioned answers carry
 * it as `commentUrn`; older and some current ones only as `$URN` (protocols.md section 8, README "Platforms").
 */
export interface LinkedInComment {
  id: string;
  commentUrn?: string;
  $URN?: string;
  actor: string;
  object?: string;
  message?: { text?: string };
  parentComment?: string;
  created?: { actor?: string; time?: number };
  likesSummary?: { totalLikes?: number };
  commentsSummary?: { aggregatedTotalComments?: number };
}

/** LinkedIn names the author only by URN; names would need a profile read per author, which Herald does not do. */
export function commentOf(c: LinkedInComment & { commentUrn: string }, authorUrn: string, replies: number): PlatformComment {
  const actor = c.actor ?? c.created?.actor ?? '';
  return {
    platformCommentId: c.commentUrn,
    platformParentId: c.parentComment ?? null,
    author: { handle: actor.split(':').pop() ?? actor, displayName: '', platformId: actor, avatarUrl: null },
    text: c.message?.text ?? '',
    createdAt: new Date(c.created?.time ?? 0).toISOString(),
    likes: c.likesSummary?.totalLikes ?? 0,
    replies,
    own: actor === authorUrn,
  };
}

/**
 * The comment's URN exactly as LinkedIn lists it, so Herald's own comment and the one a sync reads are one row:
 * `commentUrn`, else `$URN`, else built from the answer's own `object` (the activity URN) and `id`. Never built from
 * the post URN Herald addressed: that names the share or ugcPost, not the activity, and matches no listed comment.
 */
export function commentUrnOf(c: Partial<LinkedInComment> | undefined): string | undefined {
  if (!c) return undefined;
  const urn = c.commentUrn ?? c.$URN;
  if (urn) return urn;
  return c.object && c.id ? `urn:li:comment:(${c.object},${c.id})` : undefined;
}

/** `urn:li:comment:(<object urn>,<comment id>)` → its parts (deleting a comment names both). */
export function parseCommentUrn(urn: string): { objectUrn: string; commentId: string } | null {
  const m = /^urn:li:comment:\((.+),([^,()]+)\)$/.exec(urn);
  return m ? { objectUrn: m[1], commentId: m[2] } : null;
}
