import { createGraphClient, graphPath, type GraphClient } from '../graph/client';
import { graphCredentialRefusal } from '../graph/errors';
import { assertQuotaLeft, defaultContainerPolling, earlierContainer, flowDeadline, publishContainer, publishedLinkOf, readPermalink, readPublishingQuota, type ContainerFlow } from '../graph/containers';
import { realSleep, type GraphAdapterDeps } from '../graph/deps';
import { deleteConfirmed, goneConfirmed } from '../graph/delete';
import { lookedUp } from '../lookup';
import { COMMENT_PAGE_SIZE, inconclusiveLookup, nextCursorOf, onlyMediaSince, withinLookupWindow, type GraphPage } from '../graph/paging';
import { answerOf, unknownIdentityAnswer } from '../answers';
import { joinListed, listedComments, type ListedComments } from '../listed-comments';
import { PlatformFailure, type PlatformAdapter, type PlatformContext, type PublishRequest } from '../types';
import { buildContainer } from './media';
import { readInstagramMetrics } from './metrics';
import { beforeCreate } from '../send-stop';
import {
  COMMENT_FIELDS, DEFAULT_FACEBOOK_GRAPH_ORIGIN, DEFAULT_INSTAGRAM_ORIGIN, ME_FIELDS, REPLY_LIST_FIELDS, USER_FIELDS, commentOf, identityOf, meAnswer, placementOf, userAnswer,
  type InstagramComment, type InstagramUser, type Via,
} from './mapper';

interface InstagramAdapterDeps extends GraphAdapterDeps {
  /** Origin for accounts connected `via: facebook` (HERALD_FACEBOOK_API_URL); `origin` serves `via: instagram`. */
  facebookOrigin?: string;
}

/** Pages of 50 stories read to settle a published story: more than an account makes in the 24 hours stories live. */
const STORY_PAGES_READ = 10;

interface Connection {
  client: GraphClient;
  via: Via;
  igUserId: string | undefined;
}

/**
 * Instagram content publishing (protocols.md section 6), for both logins: `via: instagram` (graph.instagram.com,
 * Instagram user token) and `via: facebook` (graph.facebook.com, `ig_user_id`). Same paths and payloads; only the
 * origin, the way the account id is found, and delete (Facebook login only) differ.
 */
export function createInstagramAdapter(deps: InstagramAdapterDeps): PlatformAdapter {
  const now = deps.now ?? (() => new Date());
  const sleep = deps.sleep ?? realSleep;

  function connect(ctx: PlatformContext): Connection {
    const via: Via = (ctx.settings.via ?? ctx.credentials.via) === 'facebook' ? 'facebook' : 'instagram';
    const accessToken = ctx.credentials.access_token;
    if (!accessToken) throw new PlatformFailure('instagram', 'reauthorize', 'Instagram needs an access token; reconnect the account.');
    const origin = via === 'facebook' ? (deps.facebookOrigin ?? DEFAULT_FACEBOOK_GRAPH_ORIGIN) : (deps.origin ?? DEFAULT_INSTAGRAM_ORIGIN);
    return { client: createGraphClient({ http: deps.http, origin, platform: 'instagram', accessToken }), via, igUserId: ctx.settings.igUserId ?? ctx.credentials.ig_user_id };
  }

  async function userIdOf(conn: Connection): Promise<string> {
    if (conn.igUserId) return conn.igUserId;
    if (conn.via === 'facebook') throw new PlatformFailure('instagram', 'reauthorize', 'Instagram via Facebook needs the ig_user_id of the account; reconnect the account.');
    const me = await conn.client.get<InstagramUser>('/me', { fields: ME_FIELDS }, 'connect');
    return me.user_id ?? me.id;
  }

  function flowFor(client: GraphClient, userId: string, stop?: AbortSignal): ContainerFlow {
    const poll = deps.containerPolling ?? defaultContainerPolling;
    return {
      client, platform: 'instagram', userId, createEdge: 'media', publishEdge: 'media_publish', statusField: 'status_code', statusFields: 'status_code,status',
      describeError: () => 'Instagram could not process the media', sleep, now, poll, deadline: flowDeadline(now, poll), stop,
    };
  }

  const unconfirmed = (req: PublishRequest) => inconclusiveLookup('instagram', placementOf(req.configuration) === 'story' ? 'story' : 'post');

  /** The newest post of the account with the request's text, published within the lookup window. */
  async function findRecent(client: GraphClient, userId: string, req: PublishRequest): Promise<string | null> {
    // A story carries no caption at all.
    const story = !req.replyTo && placementOf(req.configuration) === 'story';
    if (story || req.text === '') throw inconclusiveLookup('instagram', story ? 'story' : req.replyTo ? 'comment' : 'post');
    if (req.replyTo) {
      const page = await client.get<GraphPage<InstagramComment>>(graphPath(req.replyTo.platformPostId, 'comments'), { fields: COMMENT_FIELDS, limit: COMMENT_PAGE_SIZE }, 'read');
      return page.data.find((c) => c.from?.id === userId && (c.text ?? '') === req.text && withinLookupWindow(c.timestamp, now(), req.earlierAttemptSince))?.id ?? null;
    }
    const page = await client.get<GraphPage<{ id: string; caption?: string; timestamp: string }>>(graphPath(userId, 'media'), { fields: 'id,caption,timestamp', limit: 10 }, 'publish');
    return page.data.find((m) => withinLookupWindow(m.timestamp, now(), req.earlierAttemptSince) && (m.caption ?? '') === req.text)?.id ?? null;
  }

  /**
   * The media a container known PUBLISHED became (`PublishedLookup`): a story is the only story of the account made
   * since its publishing began (`onlyMediaSince`; every live story is listed, pages followed up to a bound), anything
   * else is looked for by its caption as a lost create is.
   */
  async function findKnownPublished(client: GraphClient, userId: string, req: PublishRequest, since: number): Promise<string | null> {
    if (req.replyTo || placementOf(req.configuration) !== 'story') return findRecent(client, userId, req);
    const stories: Array<{ id: string; timestamp?: string }> = [];
    let cursor: string | null | undefined;
    for (let pages = 0; pages < STORY_PAGES_READ; pages += 1) {
      const page = await client.get<GraphPage<{ id: string; timestamp?: string }>>(graphPath(userId, 'stories'), { fields: 'id,timestamp', limit: 50, after: cursor ?? undefined }, 'publish');
      stories.push(...page.data);
      cursor = nextCursorOf(page);
      if (!cursor) return onlyMediaSince(stories, since);
    }
    // More stories than were read: one not read could be it.
    return null;
  }

  async function drainReplies(client: GraphClient, comment: InstagramComment): Promise<InstagramComment[]> {
    const replies = [...(comment.replies?.data ?? [])];
    let cursor = comment.replies ? nextCursorOf(comment.replies as GraphPage<unknown>) : null;
    while (cursor) {
      const page = await client.get<GraphPage<InstagramComment>>(graphPath(comment.id, 'replies'), { fields: REPLY_LIST_FIELDS, limit: COMMENT_PAGE_SIZE, after: cursor }, 'read');
      replies.push(...page.data);
      cursor = nextCursorOf(page);
    }
    return replies;
  }

  return {
    platform: 'instagram',
    credentialRefusal: graphCredentialRefusal,

    async verify(ctx) {
      const conn = connect(ctx);
      if (conn.via === 'instagram') {
        const me = answerOf('instagram', meAnswer, await conn.client.get<unknown>('/me', { fields: ME_FIELDS }, 'connect'), unknownIdentityAnswer('instagram'));
        // The schema holds one of the two.
        return identityOf(me, (me.user_id ?? me.id)!, 'instagram');
      }
      const userId = await userIdOf(conn);
      const user = answerOf('instagram', userAnswer, await conn.client.get<unknown>(graphPath(userId), { fields: USER_FIELDS }, 'connect'), unknownIdentityAnswer('instagram'));
      return identityOf(user, userId, 'facebook');
    },

    async publish(ctx, req) {
      const conn = connect(ctx);
      const userId = await userIdOf(conn);
      if (req.replyTo) {
        beforeCreate('instagram', req.signal);
        const res = await conn.client.post<{ id: string }>(graphPath(req.replyTo.platformPostId, 'comments'), { message: req.text }, 'reply', { creates: true }).catch(async (err) => {
          const found = err instanceof PlatformFailure && err.kind === 'unknown_outcome' ? await lookedUp(err, () => findRecent(conn.client, userId, req)) : null;
          if (found) return { id: found };
          throw err;
        });
        return { platformPostId: res.id, url: null };
      }
      assertQuotaLeft('instagram', await readPublishingQuota(conn.client, userId, 'content_publishing_limit', 'quota_usage', 'config'), 'posts');
      const flow = flowFor(conn.client, userId, req.signal);
      const lookup = (since: number) => findKnownPublished(conn.client, userId, req, since);
      // The retry of an attempt that recorded its container publishes that one when it is still FINISHED.
      const earlier = await earlierContainer(flow, req.attempt, lookup, () => unconfirmed(req));
      if (earlier && 'published' in earlier) return { platformPostId: earlier.published, ...(await publishedLinkOf(conn.client, earlier.published)) };
      const containerId = earlier?.ready ?? (await buildContainer(flow, req, placementOf(req.configuration)));
      const mediaId = await publishContainer(flow, containerId, lookup, req.attempt);
      return { platformPostId: mediaId, ...(await publishedLinkOf(conn.client, mediaId)) };
    },

    async findPublished(ctx, req) {
      const conn = connect(ctx);
      const userId = await userIdOf(conn);
      if (!req.replyTo) {
        // The container the earlier call recorded settles it where it can: published, or FINISHED (never published).
        const lookup = (since: number) => findKnownPublished(conn.client, userId, req, since);
        const earlier = await earlierContainer(flowFor(conn.client, userId), req.attempt, lookup, () => unconfirmed(req));
        if (earlier && 'published' in earlier) return { platformPostId: earlier.published, ...(await publishedLinkOf(conn.client, earlier.published)) };
        if (earlier) return null;
      }
      const id = await findRecent(conn.client, userId, req);
      if (!id) return null;
      return { platformPostId: id, ...(req.replyTo ? { url: null } : await publishedLinkOf(conn.client, id)) };
    },

    async delete(ctx, platformPostId) {
      const conn = connect(ctx);
      if (conn.via === 'instagram') {
        throw new PlatformFailure('instagram', 'permanent', 'Instagram does not let accounts connected via Instagram delete posts; connect the account via Facebook to delete.');
      }
      await deleteConfirmed(conn.client, 'instagram', platformPostId, 'delete');
    },

    async resolveUrl(ctx, platformPostId) {
      return readPermalink(connect(ctx).client, platformPostId);
    },

    async listComments(ctx, platformPostId, cursor) {
      const conn = connect(ctx);
      const userId = await userIdOf(conn);
      const page = await conn.client.get<GraphPage<InstagramComment>>(graphPath(platformPostId, 'comments'), { fields: COMMENT_FIELDS, limit: COMMENT_PAGE_SIZE, after: cursor }, 'read');
      const listed: ListedComments[] = [];
      for (const top of page.data) {
        const replies = await drainReplies(conn.client, top);
        listed.push(listedComments([top], (c) => commentOf(c, null, replies.length, userId), (c) => c.id), listedComments(replies, (r) => commentOf(r, top.id, 0, userId), (r) => r.id));
      }
      return { ...joinListed(listed), nextCursor: nextCursorOf(page) };
    },

    async replyToComment(ctx, _platformPostId, platformCommentId, text) {
      // Instagram attaches a reply to a reply to the top-level comment itself.
      const { client } = connect(ctx);
      const res = await goneConfirmed(client, 'instagram', platformCommentId, 'reply', () =>
        client.post<{ id: string }>(graphPath(platformCommentId, 'replies'), { message: text }, 'reply', { creates: true }),
      );
      return { platformPostId: res.id, url: null };
    },

    async hideComment(ctx, platformCommentId, hidden) {
      const { client } = connect(ctx);
      await goneConfirmed(client, 'instagram', platformCommentId, 'hide', () => client.post(graphPath(platformCommentId), { hide: String(hidden) }, 'hide'));
    },

    async deleteComment(ctx, platformCommentId) {
      await deleteConfirmed(connect(ctx).client, 'instagram', platformCommentId, 'delete_comment');
    },

    readMetrics: (ctx, req) => readInstagramMetrics(connect(ctx).client, req),
  };
}
