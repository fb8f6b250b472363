import type { HttpClient } from '../../net/http';
import { answerOf, unknownIdentityAnswer } from '../answers';
import { joinListed, listedComments, type ListedComments } from '../listed-comments';
import { lookedUp } from '../lookup';
import { PlatformFailure, type PlatformAdapter, type PlatformContext, type PublishedPost, type PublishRequest } from '../types';
import { createLinkedInClient, encodeUrn, type LinkedInClient } from './client';
import { matchOfRequest, settleDuplicate, type ReadPost } from './duplicate';
import { linkedInCredentialRefusal, linkedInDuplicateOf } from './errors';
import { uploadImage } from './media';
import { readLinkedInMetrics } from './metrics';
import { beforeCreate } from '../send-stop';
import {
  DEFAULT_LINKEDIN_ORIGIN, POSTING_ROLES, commentOf, commentUrl, commentUrnOf, memberAnswer, memberIdentity, organizationAclsAnswer, organizationAnswer, organizationIdentity, parseCommentUrn, postBody,
  postUrl, type LinkedInComment,
} from './mapper';

interface LinkedInAdapterDeps {
  http: HttpClient;
  origin?: string;
  now?: () => Date;
  /** `LinkedIn-Version` header; defaults to the version this adapter was written against. */
  version?: string;
}

const COMMENT_PAGE_SIZE = 25;

/** A listed comment, its URN settled (`commentUrnOf`). */
type ListedComment = LinkedInComment & { commentUrn: string };

interface Connection {
  client: LinkedInClient;
  authorUrn: string | undefined;
  organizationId: string | undefined;
}

/**
 * LinkedIn Posts API (protocols.md section 8) for a member profile (author from OpenID userinfo) or an organization
 * Page (`organization_id`, the member must hold a posting role). No native threads: parts are standalone posts.
 * Comments (read, reply, delete own) exist for Pages only; LinkedIn has no comment hiding.
 */
export function createLinkedInAdapter(deps: LinkedInAdapterDeps): PlatformAdapter {
  const origin = deps.origin ?? DEFAULT_LINKEDIN_ORIGIN;
  const now = deps.now ?? (() => new Date());

  function connect(ctx: PlatformContext): Connection {
    const accessToken = ctx.credentials.access_token;
    if (!accessToken) throw new PlatformFailure('linkedin', 'reauthorize', 'LinkedIn needs an access token; reconnect the account.');
    const organizationId = ctx.settings.organizationId ?? ctx.credentials.organization_id;
    const authorUrn = ctx.settings.authorUrn ?? (organizationId ? `urn:li:organization:${organizationId}` : undefined);
    return { client: createLinkedInClient({ http: deps.http, origin, accessToken, version: deps.version, now }), authorUrn, organizationId };
  }

  async function authorOf(conn: Connection): Promise<string> {
    if (conn.authorUrn) return conn.authorUrn;
    const res = await conn.client.send({ method: 'GET', path: '/v2/userinfo', action: 'connect' });
    return memberIdentity(res.json as { sub: string }).settings!.authorUrn;
  }

  /**
   * The comment's id is its URN as the listing will give it (`commentUrnOf`), so a sync finds Herald's own comment
   * under the same id: the created comment in the 201's body, else `x-restli-id` when it is the URN, else the comment
   * read back by its id (`x-restli-id` is the bare comment id). Only when that read fails is the URN built from the
   * post URN, as before 2026-12-07 (still deletable, since a delete names the post; a sync then lists it once more).
   */
  async function createComment(conn: Connection, postUrn: string, text: string, parentComment?: string, stop?: AbortSignal): Promise<PublishedPost> {
    const actor = await authorOf(conn);
    beforeCreate('linkedin', stop);
    const res = await conn.client.send({
      method: 'POST', path: `/rest/socialActions/${encodeUrn(postUrn)}/comments`, action: 'reply', creates: true,
      json: { actor, object: postUrn, message: { text }, ...(parentComment ? { parentComment } : {}) },
    });
    const header = res.headers.get('x-restli-id') ?? undefined;
    const body = res.json as Partial<LinkedInComment> | undefined;
    const id = body?.id ?? header;
    const urn = commentUrnOf(body) ?? (header?.startsWith('urn:li:comment:') ? header : undefined) ?? (id ? await readCommentUrn(conn, postUrn, id) : undefined);
    if (!urn) throw new PlatformFailure('linkedin', 'unknown_outcome', 'LinkedIn accepted the comment without saying which comment it made.', undefined, { status: res.status });
    return { platformPostId: urn, url: commentUrl(postUrn, urn) };
  }

  /** `GET /rest/socialActions/{post}/comments/{id}` ("Get a Comment"); the create already happened, so a failed read never fails it. */
  async function readCommentUrn(conn: Connection, postUrn: string, id: string): Promise<string> {
    const read = await conn.client
      .send({ method: 'GET', path: `/rest/socialActions/${encodeUrn(postUrn)}/comments/${encodeURIComponent(id)}`, action: 'read' })
      .then((r) => commentUrnOf(r.json as Partial<LinkedInComment> | undefined))
      .catch(() => undefined);
    return read ?? `urn:li:comment:(${postUrn},${id})`;
  }

  /**
   * A Page's recent posts, by the author finder. A member's cannot be read: the finder needs the restricted
   * `r_member_social` for member authors (protocols.md section 12), which Herald is not granted, so it answers 403 and
   * a lost member post stays unconfirmed (never asked, never classified as a lost connection).
   */
  async function findRecentPost(conn: Connection, req: PublishRequest, lost: PlatformFailure): Promise<PublishedPost | null> {
    if (!conn.organizationId) throw lost;
    return lookedUp(lost, () => findPagePost(conn, req));
  }

  async function findPagePost(conn: Connection, req: PublishRequest): Promise<PublishedPost | null> {
    const author = await authorOf(conn);
    const res = await conn.client.send({ method: 'GET', path: '/rest/posts', query: { q: 'author', author, count: 10, sortBy: 'LAST_MODIFIED' }, action: 'publish' });
    const elements = (res.json as { elements?: ReadPost[] } | undefined)?.elements ?? [];
    const hit = elements.find((p) => matchOfRequest(p, req, now()) === 'recent');
    return hit ? { platformPostId: hit.id, url: postUrl(hit.id) } : null;
  }

  function requirePage(conn: Connection): void {
    if (!conn.organizationId) throw new PlatformFailure('linkedin', 'permanent', 'LinkedIn offers no comment access for member profile posts; only Page posts have comments in Herald.');
  }

  async function readComments(conn: Connection, targetUrn: string, start: number): Promise<{ elements: ListedComment[]; unidentified: number; next: number | null; total: number | undefined }> {
    const res = await conn.client.send({ method: 'GET', path: `/rest/socialActions/${encodeUrn(targetUrn)}/comments`, query: { start, count: COMMENT_PAGE_SIZE }, action: 'read' });
    const body = res.json as { elements?: LinkedInComment[]; paging?: { start?: number; count?: number; total?: number } } | undefined;
    const raw = body?.elements ?? [];
    const total = body?.paging?.total;
    const end = start + raw.length;
    const more = total !== undefined ? end < total : raw.length === COMMENT_PAGE_SIZE;
    // Paging counts what LinkedIn sent; an element without any URN (malformed) is not a comment Herald can act on.
    const elements = raw.flatMap((c) => {
      const commentUrn = commentUrnOf(c);
      return commentUrn ? [{ ...c, commentUrn }] : [];
    });
    return { elements, unidentified: raw.length - elements.length, next: more && raw.length > 0 ? end : null, total };
  }

  /**
   * A comment page's cursor: its offset, and the total LinkedIn reported with the page before ("<start>:<total>").
   * Offsets shift when a comment is deleted between page reads, so a later page would skip a live comment and a
   * complete read would record it deleted (`findUnseenComments`): a total that changed refuses the read (retryable;
   * the next refresh reads from the start), and nothing is inferred from it.
   */
  function commentCursor(next: number, total: number | undefined): string {
    return total === undefined ? String(next) : `${next}:${total}`;
  }

  function readCommentCursor(cursor: string | undefined): { start: number; total: number | undefined } {
    const [start, total] = (cursor ?? '0').split(':');
    return { start: Number(start), total: total === undefined ? undefined : Number(total) };
  }

  return {
    platform: 'linkedin',
    credentialRefusal: linkedInCredentialRefusal,

    async verify(ctx) {
      const conn = connect(ctx);
      if (!conn.organizationId) {
        const res = await conn.client.send({ method: 'GET', path: '/v2/userinfo', action: 'connect' });
        return memberIdentity(answerOf('linkedin', memberAnswer, res.json, unknownIdentityAnswer('linkedin')));
      }
      const orgUrn = `urn:li:organization:${conn.organizationId}`;
      const acls = await conn.client.send({ method: 'GET', path: '/rest/organizationAcls', query: { q: 'roleAssignee', state: 'APPROVED', count: 100 }, action: 'connect' });
      const roles = (answerOf('linkedin', organizationAclsAnswer, acls.json, unknownIdentityAnswer('linkedin')).elements ?? []).filter((e) => e.organization === orgUrn);
      if (!roles.some((r) => r.role !== undefined && POSTING_ROLES.has(r.role))) {
        throw new PlatformFailure('linkedin', 'permanent', `LinkedIn refused the connection: this member cannot post for organization ${conn.organizationId}; a Page administrator must connect it.`);
      }
      const org = await conn.client.send({ method: 'GET', path: `/rest/organizations/${encodeURIComponent(conn.organizationId)}`, action: 'connect' });
      return organizationIdentity(answerOf('linkedin', organizationAnswer, org.json, unknownIdentityAnswer('linkedin')));
    },

    async publish(ctx, req) {
      const conn = connect(ctx);
      // LinkedIn has no reply chain: an answer to a post is a comment by the author (thread parts come without replyTo).
      if (req.replyTo) return createComment(conn, req.replyTo.platformPostId, req.text, undefined, req.signal);
      const author = await authorOf(conn);
      const images = [];
      for (const item of req.media) images.push(await uploadImage(conn.client, author, item));
      beforeCreate('linkedin', req.signal);
      try {
        const res = await conn.client.send({ method: 'POST', path: '/rest/posts', json: postBody(author, req.text, images), action: 'publish', creates: true });
        const urn = res.headers.get('x-restli-id');
        if (!urn) throw new PlatformFailure('linkedin', 'unknown_outcome', 'LinkedIn accepted the post without saying which post it made.', undefined, { status: res.status });
        return { platformPostId: urn, url: postUrl(urn) };
      } catch (err) {
        if (err instanceof PlatformFailure && err.kind === 'unknown_outcome') {
          const found = await findRecentPost(conn, req, err);
          if (found) return found;
        }
        const duplicate = err instanceof PlatformFailure ? linkedInDuplicateOf(err.detail) : null;
        if (duplicate && req.earlierAttemptOpen) return settleDuplicate({ client: conn.client, author, req, now: now() }, duplicate, err as PlatformFailure);
        throw err;
      }
    },

    async findPublished(ctx, req) {
      const conn = connect(ctx);
      if (req.replyTo) throw new PlatformFailure('linkedin', 'unknown_outcome', 'LinkedIn did not answer in time; the comment may have been published.');
      return findRecentPost(conn, req, new PlatformFailure('linkedin', 'unknown_outcome', 'LinkedIn did not answer in time; the post may have been published.'));
    },

    async delete(ctx, platformPostId) {
      const conn = connect(ctx);
      // Deletes are idempotent on LinkedIn (204 again); a 404 is treated the same way.
      await conn.client.send({ method: 'DELETE', path: `/rest/posts/${encodeUrn(platformPostId)}`, headers: { 'x-restli-method': 'DELETE' }, action: 'delete' }).catch(ignoreGone);
    },

    async resolveUrl(_ctx, platformPostId) {
      return postUrl(platformPostId);
    },

    async listComments(ctx, platformPostId, cursor) {
      const conn = connect(ctx);
      requirePage(conn);
      const author = await authorOf(conn);
      const at = readCommentCursor(cursor);
      const page = await readComments(conn, platformPostId, at.start);
      if (at.total !== undefined && page.total !== undefined && page.total !== at.total) {
        throw new PlatformFailure('linkedin', 'retryable', 'LinkedIn\'s comments on this post changed between pages; they are read again from the start at the next refresh.');
      }
      // An element without a URN is a comment too: the read can then name no stored comment gone (`unidentified`).
      let unidentified = page.unidentified;
      const listed: ListedComments[] = [];
      for (const top of page.elements) {
        const replies: ListedComment[] = [];
        if ((top.commentsSummary?.aggregatedTotalComments ?? 0) > 0) {
          for (let start: number | null = 0; start !== null; ) {
            const sub = await readComments(conn, top.commentUrn, start);
            replies.push(...sub.elements);
            unidentified += sub.unidentified;
            start = sub.next;
          }
        }
        listed.push(
          listedComments([top], (c) => commentOf(c, author, replies.length), (c) => c.commentUrn),
          listedComments(replies, (r) => commentOf({ ...r, parentComment: r.parentComment ?? top.commentUrn }, author, 0), (c) => c.commentUrn),
        );
      }
      listed.push({ comments: [], unreadable: { ids: [], unidentified } });
      return { ...joinListed(listed), nextCursor: page.next === null ? null : commentCursor(page.next, page.total) };
    },

    async replyToComment(ctx, platformPostId, platformCommentId, text) {
      const conn = connect(ctx);
      requirePage(conn);
      return createComment(conn, platformPostId, text, platformCommentId);
    },

    /**
     * `DELETE /rest/socialActions/{post urn}/comments/{comment id}?actor=`: the path names the post (share or ugcPost
     * URN) the comment is on, as documented, not the activity URN inside the comment's URN; the post's id is passed
     * for that, and only a caller without it falls back to the URN's own object.
     */
    async deleteComment(ctx, platformCommentId, platformPostId) {
      const conn = connect(ctx);
      requirePage(conn);
      const parts = parseCommentUrn(platformCommentId);
      if (!parts) throw new PlatformFailure('linkedin', 'permanent', 'LinkedIn refused to delete the comment: the comment id is not a LinkedIn comment URN.');
      const actor = await authorOf(conn);
      const target = platformPostId ?? parts.objectUrn;
      await conn.client
        .send({ method: 'DELETE', path: `/rest/socialActions/${encodeUrn(target)}/comments/${encodeURIComponent(parts.commentId)}`, query: { actor }, action: 'delete_comment' })
        .catch(ignoreGone);
    },

    readMetrics: (ctx, req) => readLinkedInMetrics(connect(ctx), req),
  };
}

function ignoreGone(err: unknown): void {
  if (err instanceof PlatformFailure && err.kind === 'gone') return;
  throw err;
}
