import { createGraphClient, graphPath, type GraphClient } from '../graph/client';
import { graphCredentialRefusal } from '../graph/errors';
import type { GraphAdapterDeps } from '../graph/deps';
import { deleteConfirmed, goneConfirmed } from '../graph/delete';
import { lookedUp } from '../lookup';
import { COMMENT_PAGE_SIZE, inconclusiveLookup, nextCursorOf, withinLookupWindow, type GraphPage } from '../graph/paging';
import { answerOf, unknownIdentityAnswer } from '../answers';
import { listedComments } from '../listed-comments';
import { PlatformFailure, type PlatformAdapter, type PlatformContext, type PublishedPost, type PublishRequest } from '../types';
import { uploadUnpublishedPhoto } from './media';
import { beforeCreate } from '../send-stop';
import { readFacebookMetrics } from './metrics';
import {
  COMMENT_FIELDS, DEFAULT_FACEBOOK_ORIGIN, PAGE_FIELDS, commentOf, commentUrl, feedPostId, identityOf, linkOf, pageAnswer, placementOf, postUrl,
  type FacebookComment,
} from './mapper';

type FacebookAdapterDeps = GraphAdapterDeps;

/**
 * Facebook Pages over the Graph API (protocols.md section 5). Credentials: `page_id` and a Page `access_token`.
 * Feed posts (text, link, photos via unpublished uploads + `attached_media`), Page photo stories, comments on the
 * Page's own posts (first comments, replies), and comment moderation (hide any, delete any).
 */
export function createFacebookAdapter(deps: FacebookAdapterDeps): PlatformAdapter {
  const origin = deps.origin ?? DEFAULT_FACEBOOK_ORIGIN;
  const now = deps.now ?? (() => new Date());

  function connect(ctx: PlatformContext): { client: GraphClient; pageId: string } {
    const pageId = ctx.settings.pageId ?? ctx.credentials.page_id;
    const accessToken = ctx.credentials.access_token;
    if (!pageId || !accessToken) throw new PlatformFailure('facebook', 'reauthorize', 'Facebook needs a page_id and a Page access token; reconnect the account.');
    return { client: createGraphClient({ http: deps.http, origin, platform: 'facebook', accessToken }), pageId };
  }

  async function postComment(client: GraphClient, target: string, text: string, req?: PublishRequest): Promise<string> {
    const image = req?.media.find((m) => m.kind === 'image' && m.publicUrl);
    beforeCreate('facebook', req?.signal);
    const res = await client.post<{ id: string }>(graphPath(target, 'comments'), { message: text, attachment_url: image?.publicUrl }, 'reply', { creates: true });
    return res.id;
  }

  async function publishFeed(client: GraphClient, pageId: string, req: PublishRequest): Promise<string> {
    const photoIds: string[] = [];
    for (const item of req.media) photoIds.push(await uploadUnpublishedPhoto(client, pageId, item));
    const fields: Record<string, string | undefined> = { message: req.text || undefined, link: linkOf(req.configuration) };
    photoIds.forEach((id, i) => (fields[`attached_media[${i}]`] = JSON.stringify({ media_fbid: id })));
    beforeCreate('facebook', req.signal);
    const res = await client.post<{ id: string }>(graphPath(pageId, 'feed'), fields, 'publish', { creates: true });
    return feedPostId(pageId, res.id);
  }

  async function publishStory(client: GraphClient, pageId: string, req: PublishRequest): Promise<string> {
    const photo = req.media[0];
    if (!photo || photo.kind !== 'image') throw new PlatformFailure('facebook', 'permanent', 'Facebook refused the story: a Page story needs one photo.');
    const photoId = await uploadUnpublishedPhoto(client, pageId, photo);
    beforeCreate('facebook', req.signal);
    const res = await client.post<{ success: boolean; post_id: string }>(graphPath(pageId, 'photo_stories'), { photo_id: photoId }, 'publish', { creates: true });
    return res.post_id;
  }

  async function findRecentPost(client: GraphClient, pageId: string, req: PublishRequest): Promise<PublishedPost | null> {
    if (req.text === '') throw inconclusiveLookup('facebook', req.replyTo ? 'comment' : 'post');
    if (req.replyTo) {
      const page = await client.get<GraphPage<FacebookComment>>(graphPath(req.replyTo.platformPostId, 'comments'), { fields: COMMENT_FIELDS, filter: 'stream', order: 'reverse_chronological', limit: COMMENT_PAGE_SIZE }, 'read');
      const hit = page.data.find((c) => c.from?.id === pageId && (c.message ?? '') === req.text && withinLookupWindow(c.created_time, now(), req.earlierAttemptSince));
      return hit ? { platformPostId: hit.id, url: commentUrl(pageId, req.replyTo.platformPostId, hit.id) } : null;
    }
    const page = await client.get<GraphPage<{ id: string; message?: string; created_time: string }>>(graphPath(pageId, 'published_posts'), { fields: 'id,message,created_time', limit: 10 }, 'publish');
    const hit = page.data.find((p) => (p.message ?? '') === req.text && withinLookupWindow(p.created_time, now(), req.earlierAttemptSince));
    return hit ? { platformPostId: feedPostId(pageId, hit.id), url: postUrl(pageId, hit.id) } : null;
  }

  const adapter: PlatformAdapter = {
    platform: 'facebook',
    credentialRefusal: graphCredentialRefusal,

    async verify(ctx) {
      const { client, pageId } = connect(ctx);
      // `/me` answers the Page only for that Page's own token (protocols.md section 5): a user token, or another
      // Page's, may read the Page's public fields by its id yet cannot publish to it.
      const me = answerOf('facebook', pageAnswer, await client.get<unknown>(graphPath('me'), { fields: PAGE_FIELDS }, 'connect'), unknownIdentityAnswer('facebook'));
      if (me.id !== pageId) {
        throw new PlatformFailure('facebook', 'reauthorize', `Facebook says this access_token is not the Page token of page ${pageId}; connect with that Page's own access token.`);
      }
      return identityOf(me);
    },

    async publish(ctx, req) {
      const { client, pageId } = connect(ctx);
      try {
        if (req.replyTo) {
          const id = await postComment(client, req.replyTo.platformPostId, req.text, req);
          return { platformPostId: id, url: commentUrl(pageId, req.replyTo.platformPostId, id) };
        }
        const id = placementOf(req.configuration) === 'story' ? await publishStory(client, pageId, req) : await publishFeed(client, pageId, req);
        return { platformPostId: id, url: postUrl(pageId, id) };
      } catch (err) {
        // A lost answer to the create: look before anyone repeats it. Stories have no lookup here, so they stay unknown.
        if (err instanceof PlatformFailure && err.kind === 'unknown_outcome' && placementOf(req.configuration) === 'feed') {
          const found = await lookedUp(err, () => findRecentPost(client, pageId, req));
          if (found) return found;
        }
        throw err;
      }
    },

    async findPublished(ctx, req) {
      const { client, pageId } = connect(ctx);
      if (!req.replyTo && placementOf(req.configuration) === 'story') throw inconclusiveLookup('facebook', 'story');
      return findRecentPost(client, pageId, req);
    },

    async delete(ctx, platformPostId) {
      await deleteConfirmed(connect(ctx).client, 'facebook', platformPostId, 'delete');
    },

    async resolveUrl(ctx, platformPostId) {
      return postUrl(connect(ctx).pageId, platformPostId);
    },

    async listComments(ctx, platformPostId, cursor) {
      const { client, pageId } = connect(ctx);
      const page = await client.get<GraphPage<FacebookComment>>(
        graphPath(platformPostId, 'comments'),
        { fields: COMMENT_FIELDS, filter: 'stream', order: 'reverse_chronological', limit: COMMENT_PAGE_SIZE, after: cursor },
        'read',
      );
      return { ...listedComments(page.data, (c) => commentOf(c, pageId), (c) => c.id), nextCursor: nextCursorOf(page) };
    },

    async replyToComment(ctx, platformPostId, platformCommentId, text) {
      const { client, pageId } = connect(ctx);
      const id = await goneConfirmed(client, 'facebook', platformCommentId, 'reply', () => postComment(client, platformCommentId, text));
      return { platformPostId: id, url: commentUrl(pageId, platformPostId, id) };
    },

    async hideComment(ctx, platformCommentId, hidden) {
      const { client } = connect(ctx);
      await goneConfirmed(client, 'facebook', platformCommentId, 'hide', () => client.post(graphPath(platformCommentId), { is_hidden: String(hidden) }, 'hide'));
    },

    async deleteComment(ctx, platformCommentId) {
      await deleteConfirmed(connect(ctx).client, 'facebook', platformCommentId, 'delete_comment');
    },

    readMetrics: (ctx, req) => readFacebookMetrics(connect(ctx).client, req),
  };
  return adapter;
}
