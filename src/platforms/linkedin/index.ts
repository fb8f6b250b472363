import type { HttpClient } from '../../net/http';
import { LOOKUP_WINDOW_MS } from '../graph/paging';
import { answerOf, unknownIdentityAnswer } from '../answers';
import { lookedUp } from '../lookup';
import { PlatformFailure, type PlatformAdapter, type PlatformComment, type PlatformContext, type PublishedPost, type PublishRequest } from '../types';
import { createLinkedInClient, encodeUrn, type LinkedInClient } from './client';
import { uploadImage } from './media';
import { readLinkedInMetrics } from './metrics';
import {
  DEFAULT_LINKEDIN_ORIGIN, POSTING_ROLES, commentOf, commentUrl, escapeLittleText, memberAnswer, memberIdentity, organizationAclsAnswer, organizationAnswer, organizationIdentity, parseCommentUrn, postBody, postUrl,
  type LinkedInComment,
} from './mapper';

interface LinkedInAdapterDeps {
  http: HttpClient;
  origin?: string;
  now?: () => Date;
  /** `LinkedIn-Version` header; defaults to the version this adapter was written against. */
  version?: string;
}

const COMMENT_PAGE_SIZE = 25;

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

  async function createComment(conn: Connection, postUrn: string, text: string, parentComment?: string): Promise<PublishedPost> {
    const actor = await authorOf(conn);
    const res = await conn.client.send({
      method: 'POST', path: `/rest/socialActions/${encodeUrn(postUrn)}/comments`, action: 'reply', creates: true,
      json: { actor, object: postUrn, message: { text }, ...(parentComment ? { parentComment } : {}) },
    });
    const body = res.json as Partial<LinkedInComment> | undefined;
    const id = res.headers.get('x-restli-id') ?? body?.id;
    const urn = body?.commentUrn ?? `urn:li:comment:(${postUrn},${id})`;
    return { platformPostId: urn, url: commentUrl(postUrn, urn) };
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
    const elements = (res.json as { elements?: Array<{ id: string; commentary?: string; createdAt?: number }> } | undefined)?.elements ?? [];
    const commentary = escapeLittleText(req.text);
    const hit = elements.find((p) => p.commentary === commentary && Math.abs(now().getTime() - (p.createdAt ?? 0)) <= LOOKUP_WINDOW_MS);
    return hit ? { platformPostId: hit.id, url: postUrl(hit.id) } : null;
  }

  function requirePage(conn: Connection): void {
    if (!conn.organizationId) throw new PlatformFailure('linkedin', 'permanent', 'LinkedIn offers no comment access for member profile posts; only Page posts have comments in Herald.');
  }

  async function readComments(conn: Connection, targetUrn: string, start: number): Promise<{ elements: LinkedInComment[]; next: number | null }> {
    const res = await conn.client.send({ method: 'GET', path: `/rest/socialActions/${encodeUrn(targetUrn)}/comments`, query: { start, count: COMMENT_PAGE_SIZE }, action: 'read' });
    const body = res.json as { elements?: LinkedInComment[]; paging?: { start?: number; count?: number; total?: number } } | undefined;
    const elements = body?.elements ?? [];
    const total = body?.paging?.total;
    const end = start + elements.length;
    const more = total !== undefined ? end < total : elements.length === COMMENT_PAGE_SIZE;
    return { elements, next: more && elements.length > 0 ? end : null };
  }

  return {
    platform: 'linkedin',

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
      if (req.replyTo) return createComment(conn, req.replyTo.platformPostId, req.text);
      const author = await authorOf(conn);
      const images = [];
      for (const item of req.media) images.push(await uploadImage(conn.client, author, item));
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
      const page = await readComments(conn, platformPostId, cursor ? Number(cursor) : 0);
      const comments: PlatformComment[] = [];
      for (const top of page.elements) {
        const replies: LinkedInComment[] = [];
        if ((top.commentsSummary?.aggregatedTotalComments ?? 0) > 0) {
          for (let start: number | null = 0; start !== null; ) {
            const sub = await readComments(conn, top.commentUrn, start);
            replies.push(...sub.elements);
            start = sub.next;
          }
        }
        comments.push(commentOf(top, author, replies.length), ...replies.map((r) => commentOf({ ...r, parentComment: r.parentComment ?? top.commentUrn }, author, 0)));
      }
      return { comments, nextCursor: page.next === null ? null : String(page.next) };
    },

    async replyToComment(ctx, platformPostId, platformCommentId, text) {
      const conn = connect(ctx);
      requirePage(conn);
      return createComment(conn, platformPostId, text, platformCommentId);
    },

    async deleteComment(ctx, platformCommentId) {
      const conn = connect(ctx);
      requirePage(conn);
      const parts = parseCommentUrn(platformCommentId);
      if (!parts) throw new PlatformFailure('linkedin', 'permanent', 'LinkedIn refused to delete the comment: the comment id is not a LinkedIn comment URN.');
      const actor = await authorOf(conn);
      await conn.client
        .send({ method: 'DELETE', path: `/rest/socialActions/${encodeUrn(parts.objectUrn)}/comments/${encodeURIComponent(parts.commentId)}`, query: { actor }, action: 'delete_comment' })
        .catch(ignoreGone);
    },

    readMetrics: (ctx, req) => readLinkedInMetrics(connect(ctx), req),
  };
}

function ignoreGone(err: unknown): void {
  if (err instanceof PlatformFailure && err.kind === 'gone') return;
  throw err;
}
