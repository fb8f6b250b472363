import { createGraphClient, graphPath, type GraphClient } from '../graph/client';
import { assertQuotaLeft, createContainer, defaultContainerPolling, earlierContainer, flowDeadline, publishContainer, publishedLinkOf, readPermalink, readPublishingQuota, waitForContainers, type ContainerFlow } from '../graph/containers';
import { realSleep, type GraphAdapterDeps } from '../graph/deps';
import { deleteConfirmed, goneConfirmed } from '../graph/delete';
import { GraphFailure, graphCredentialRefusal } from '../graph/errors';
import { COMMENT_PAGE_SIZE, inconclusiveLookup, nextCursorOf, withinLookupWindow, type GraphPage } from '../graph/paging';
import { answerOf, unknownIdentityAnswer } from '../answers';
import { listedComments } from '../listed-comments';
import { PlatformFailure, type PlatformAdapter, type PlatformContext, type PublishedPost, type PublishRequest } from '../types';
import { deletePermissionFailure, describeContainerError } from './errors';
import { readThreadsMetrics } from './metrics';
import { DEFAULT_THREADS_ORIGIN, REPLY_FIELDS, USER_FIELDS, carouselFields, carouselItemFields, commentOf, identityOf, singleFields, userAnswer, type ThreadsReply } from './mapper';

type ThreadsAdapterDeps = GraphAdapterDeps;

/**
 * Threads (protocols.md section 7): container → status → `threads_publish`, with a native reply chain through
 * `reply_to_id` (thread parts, first comments, comment replies), links read from `permalink` after publishing,
 * the 24-hour post and reply quotas checked before creating anything, replies read from `/conversation`.
 */
export function createThreadsAdapter(deps: ThreadsAdapterDeps): PlatformAdapter {
  const origin = deps.origin ?? DEFAULT_THREADS_ORIGIN;
  const now = deps.now ?? (() => new Date());
  const sleep = deps.sleep ?? realSleep;

  function connect(ctx: PlatformContext): { client: GraphClient; userId: string } {
    const accessToken = ctx.credentials.access_token;
    if (!accessToken) throw new PlatformFailure('threads', 'reauthorize', 'Threads needs an access token; reconnect the account.');
    // `me` is an alias the Threads API accepts for the token's user wherever a user id goes.
    return { client: createGraphClient({ http: deps.http, origin, platform: 'threads', accessToken }), userId: ctx.settings.threadsUserId ?? 'me' };
  }

  function flowFor(client: GraphClient, userId: string, stop?: AbortSignal): ContainerFlow {
    const poll = deps.containerPolling ?? defaultContainerPolling;
    return {
      client, platform: 'threads', userId, createEdge: 'threads', publishEdge: 'threads_publish', statusField: 'status', statusFields: 'status,error_message',
      describeError: describeContainerError, sleep, now, poll, deadline: flowDeadline(now, poll), stop,
    };
  }

  async function buildContainer(flow: ContainerFlow, req: PublishRequest): Promise<string> {
    const replyTo = req.replyTo?.platformPostId;
    if (req.media.length <= 1) {
      const id = await createContainer(flow, singleFields(req.text, req.media[0], replyTo));
      await waitForContainers(flow, [id]);
      return id;
    }
    // Children are created first and then waited for together: processing runs in parallel on Threads' side.
    const childIds: string[] = [];
    for (const item of req.media) childIds.push(await createContainer(flow, carouselItemFields(item)));
    await waitForContainers(flow, childIds);
    const parent = await createContainer(flow, carouselFields(childIds, req.text, replyTo));
    await waitForContainers(flow, [parent]);
    return parent;
  }

  /** Posts appear under `/threads`, replies under `/replies` of the user. */
  async function findRecent(client: GraphClient, userId: string, req: PublishRequest): Promise<string | null> {
    if (req.text === '') throw inconclusiveLookup('threads', req.replyTo ? 'comment' : 'post');
    const edge = req.replyTo ? 'replies' : 'threads';
    const page = await client.get<GraphPage<{ id: string; text?: string; timestamp: string }>>(graphPath(userId, edge), { fields: 'id,text,timestamp', limit: 10 }, 'publish');
    return page.data.find((p) => (p.text ?? '') === req.text && withinLookupWindow(p.timestamp, now(), req.earlierAttemptSince))?.id ?? null;
  }

  async function publish(ctx: PlatformContext, req: PublishRequest): Promise<PublishedPost> {
    const { client, userId } = connect(ctx);
    const quota = req.replyTo
      ? await readPublishingQuota(client, userId, 'threads_publishing_limit', 'reply_quota_usage', 'reply_config')
      : await readPublishingQuota(client, userId, 'threads_publishing_limit', 'quota_usage', 'config');
    assertQuotaLeft('threads', quota, req.replyTo ? 'replies' : 'posts');
    const flow = flowFor(client, userId, req.signal);
    // The retry of an attempt that recorded its container publishes that one when it is still FINISHED.
    const earlier = await earlierContainer(flow, req.attempt, () => findRecent(client, userId, req), () => unconfirmed(req));
    if (earlier && 'published' in earlier) return { platformPostId: earlier.published, ...(await publishedLinkOf(client, earlier.published)) };
    const containerId = earlier?.ready ?? (await buildContainer(flow, req));
    const mediaId = await publishContainer(flow, containerId, () => findRecent(client, userId, req), req.attempt);
    return { platformPostId: mediaId, ...(await publishedLinkOf(client, mediaId)) };
  }

  const unconfirmed = (req: PublishRequest) => inconclusiveLookup('threads', req.replyTo ? 'comment' : 'post');

  return {
    platform: 'threads',
    credentialRefusal: graphCredentialRefusal,

    async verify(ctx) {
      const { client } = connect(ctx);
      return identityOf(answerOf('threads', userAnswer, await client.get<unknown>('/me', { fields: USER_FIELDS }, 'connect'), unknownIdentityAnswer('threads')));
    },

    publish,

    async findPublished(ctx, req) {
      const { client, userId } = connect(ctx);
      // The container the earlier call recorded settles it where it can: published, or FINISHED (never published).
      // A published one is named by its text only: Meta documents no way from a container to its post.
      const earlier = await earlierContainer(flowFor(client, userId), req.attempt, () => findRecent(client, userId, req), () => unconfirmed(req));
      if (earlier && 'published' in earlier) return { platformPostId: earlier.published, ...(await publishedLinkOf(client, earlier.published)) };
      if (earlier) return null;
      const id = await findRecent(client, userId, req);
      return id ? { platformPostId: id, ...(await publishedLinkOf(client, id)) } : null;
    },

    async delete(ctx, platformPostId) {
      await deleteConfirmed(connect(ctx).client, 'threads', platformPostId, 'delete').catch((err) => {
        throw err instanceof GraphFailure && err.isPermissionError ? deletePermissionFailure(err) : err;
      });
    },

    async resolveUrl(ctx, platformPostId) {
      return readPermalink(connect(ctx).client, platformPostId);
    },

    async listComments(ctx, platformPostId, cursor) {
      const { client } = connect(ctx);
      const page = await client.get<GraphPage<ThreadsReply>>(
        graphPath(platformPostId, 'conversation'),
        // reverse=true: newest first.
        { fields: REPLY_FIELDS, reverse: 'true', limit: COMMENT_PAGE_SIZE, after: cursor },
        'read',
      );
      const childCount = (id: string) => page.data.filter((r) => r.replied_to?.id === id).length;
      return { ...listedComments(page.data, (r) => commentOf(r, platformPostId, childCount(r.id)), (r) => r.id), nextCursor: nextCursorOf(page) };
    },

    async replyToComment(ctx, platformPostId, platformCommentId, text) {
      const reply = { postId: `reply:${platformCommentId}`, text, media: [], replyTo: { platformPostId: platformCommentId, rootPlatformPostId: platformPostId } };
      return goneConfirmed(connect(ctx).client, 'threads', platformCommentId, 'reply', () => publish(ctx, reply));
    },

    async hideComment(ctx, platformCommentId, hidden) {
      const { client } = connect(ctx);
      await goneConfirmed(client, 'threads', platformCommentId, 'hide', () => client.post(graphPath(platformCommentId, 'manage_reply'), { hide: String(hidden) }, 'hide'));
    },

    async deleteComment(ctx, platformCommentId) {
      await deleteConfirmed(connect(ctx).client, 'threads', platformCommentId, 'delete_comment');
    },

    readMetrics: (ctx, req) => readThreadsMetrics(connect(ctx).client, req),
  };
}
