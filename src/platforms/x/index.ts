import type { HttpClient } from '../../net/http';
import { answerOf, unknownIdentityAnswer } from '../answers';
import { listedComments } from '../listed-comments';
import { COMMENT_PARENTS_PER_CALL, PlatformFailure, type AccountIdentity, type PlatformAdapter, type PlatformContext, type PublishRequest, type PublishedPost } from '../types';
import { createXClient, X_DEFAULT_ORIGIN } from './client';
import { lookupWindowStart, withinLookupWindow } from '../graph/paging';
import {
  COMMENT_TWEET_FIELDS,
  createTweetBody,
  isPremium,
  meAnswer,
  LOOKUP_TWEET_FIELDS,
  lookupShapeOfRequest,
  lookupShapeOfTweet,
  ancestorsOf,
  repliedToId,
  sameLookupShape,
  toComment,
  tweetUrl,
  USER_FIELDS,
  type XTweet,
  type XUser,
} from './mapper';
import { X_DUPLICATE_MESSAGE } from './errors';
import { uploadMedia, X_CHUNK_BYTES } from './media';
import { readXMetrics } from './metrics';
import { beforeCreate } from '../send-stop';

interface XAdapterDeps {
  http: HttpClient;
  /** HERALD_X_API_URL; the real API when absent. */
  origin?: string;
  now?: () => Date;
  sleep?: (ms: number) => Promise<void>;
  /** Video upload chunk size (tests make it small to exercise several segments). */
  chunkBytes?: number;
}

/**
 * A lookup after an unknown create reads the account's posts made since the earliest call still open
 * (`GET /2/users/:id/tweets` with `start_time`, X's page size at most, `pagination_token`): an account posting more
 * than a page in between still has the landed post found. Bounded: past `LOOKUP_PAGES` pages the look has not seen
 * everything, and not found is then not known (`unknown_outcome`), never a reason to send again.
 */
const LOOKUP_PAGE_SIZE = 100;
const LOOKUP_PAGES = 5;

/** X's `start_time`: RFC 3339 to the second (X documents `YYYY-MM-DDTHH:mm:ssZ`, inclusive), rounded down. */
function startTimeOf(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** X API v2 adapter: posts, self-threads by reply chain, chunked media, replies read by conversation search. */
export function createXAdapter(deps: XAdapterDeps): PlatformAdapter {
  const now = deps.now ?? (() => new Date());
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const client = createXClient(deps.http, deps.origin ?? X_DEFAULT_ORIGIN, now);
  const media = { client, sleep, chunkBytes: deps.chunkBytes ?? X_CHUNK_BYTES };

  async function findPublished(ctx: PlatformContext, req: PublishRequest): Promise<PublishedPost | null> {
    const userId = ctx.settings.user_id;
    if (!userId) return null;
    // Only a post of this attempt's time: an older one with the same text (or a media-only one) is another post.
    const wanted = lookupShapeOfRequest(req.text, req.media.length);
    const parent = req.replyTo?.platformPostId ?? null;
    const at = now();
    const query = { start_time: startTimeOf(lookupWindowStart(at, req.earlierAttemptSince)), max_results: String(LOOKUP_PAGE_SIZE), 'tweet.fields': LOOKUP_TWEET_FIELDS, exclude: 'retweets' };
    let token: string | undefined;
    for (let pages = 0; pages < LOOKUP_PAGES; pages++) {
      const page = await client.send<{ data?: XTweet[]; meta?: { next_token?: string } }>(ctx.credentials, {
        method: 'GET',
        path: `/2/users/${userId}/tweets`,
        query: token ? { ...query, pagination_token: token } : query,
      });
      const match = (page.data ?? []).find(
        (t) => withinLookupWindow(t.created_at, at, req.earlierAttemptSince) && repliedToId(t) === parent && sameLookupShape(lookupShapeOfTweet(t), wanted),
      );
      if (match) return { platformPostId: match.id, url: tweetUrl(ctx.settings.username, match.id) };
      token = page.meta?.next_token;
      if (!token) return null;
    }
    throw new PlatformFailure('x', 'unknown_outcome', `X did not answer in time, and the account posted more than Herald can read back since (${LOOKUP_PAGES * LOOKUP_PAGE_SIZE} posts); the post may have been published.`);
  }

  /**
   * X has no idempotency key: when the answer to a create is lost (`unknown_outcome`), look before anyone repeats it
   * (after a server error the retry looks, `sendMarked`). A duplicate refusal after an earlier attempt that never reported back is most likely that
   * attempt's post: it is looked up too, and unconfirmed (not failed) when it is not found.
   */
  async function createTweet(ctx: PlatformContext, req: PublishRequest, mediaIds: string[]): Promise<PublishedPost> {
    beforeCreate('x', req.signal);
    try {
      const created = await client.send<{ data: { id: string } }>(ctx.credentials, {
        method: 'POST',
        path: '/2/tweets',
        json: createTweetBody(req.text, mediaIds, req.replyTo?.platformPostId),
        isCreate: true,
      });
      return { platformPostId: created.data.id, url: tweetUrl(ctx.settings.username, created.data.id) };
    } catch (err) {
      if (!(err instanceof PlatformFailure)) throw err;
      const duplicateOfEarlier = req.earlierAttemptOpen === true && err.clientMessage === X_DUPLICATE_MESSAGE;
      if (err.kind !== 'unknown_outcome' && !duplicateOfEarlier) throw err;
      const found = await findPublished(ctx, req).catch(() => null);
      if (found) return found;
      if (!duplicateOfEarlier) throw err;
      throw new PlatformFailure('x', 'unknown_outcome', `${X_DUPLICATE_MESSAGE.replace(/\.$/, '')}; an earlier attempt may have published it.`, undefined, err.detail);
    }
  }

  async function deleteTweet(ctx: PlatformContext, id: string): Promise<void> {
    try {
      // `deleted: false` is X's answer for a post already gone (protocols.md: unverified) and counts as deleted too.
      await client.send<{ data: { deleted: boolean } }>(ctx.credentials, { method: 'DELETE', path: `/2/tweets/${id}` });
    } catch (err) {
      if (err instanceof PlatformFailure && err.kind === 'gone') return;
      throw err;
    }
  }

  return {
    platform: 'x',

    async verify(ctx): Promise<AccountIdentity> {
      const me = await client.send<unknown>(ctx.credentials, { method: 'GET', path: '/2/users/me', query: { 'user.fields': USER_FIELDS } });
      const user = answerOf('x', meAnswer, me, unknownIdentityAnswer('x')).data;
      return {
        platformAccountId: user.id,
        username: user.username,
        displayName: user.name || null,
        profileUrl: `https://x.com/${user.username}`,
        premium: isPremium(user),
        settings: { user_id: user.id, username: user.username },
      };
    },

    async publish(ctx, req): Promise<PublishedPost> {
      const mediaIds: string[] = [];
      for (const item of req.media) mediaIds.push(await uploadMedia(media, ctx.credentials, item, req.signal));
      return createTweet(ctx, req, mediaIds);
    },

    findPublished,

    delete: (ctx, platformPostId) => deleteTweet(ctx, platformPostId),

    async resolveUrl(ctx, platformPostId): Promise<string | null> {
      return tweetUrl(ctx.settings.username, platformPostId);
    },

    async listComments(ctx, platformPostId, cursor, read) {
      // Every tweet of a thread carries its first tweet's conversation id (protocols.md section 1); that root is the
      // post (or the thread's first part), never one of its comments.
      const root = read?.thread?.rootPlatformPostId ?? platformPostId;
      const page = await client.send<{ data?: XTweet[]; includes?: { users?: XUser[]; tweets?: XTweet[] }; meta?: { next_token?: string } }>(ctx.credentials, {
        method: 'GET',
        path: '/2/tweets/search/recent',
        query: {
          query: `conversation_id:${root}`,
          'tweet.fields': COMMENT_TWEET_FIELDS,
          // `referenced_tweets.id`: each reply's parent, also one past the 7 days search reaches (where its chain hangs).
          expansions: 'author_id,referenced_tweets.id',
          'user.fields': 'username,name,profile_image_url',
          max_results: '100',
          ...(cursor ? { next_token: cursor } : {}),
        },
      });
      const users = new Map((page.includes?.users ?? []).map((u) => [u.id, u]));
      const ancestors = ancestorsOf(page.includes?.tweets ?? []);
      return {
        ...listedComments(
          (page.data ?? []).filter((t) => t.id !== root),
          (t) => toComment(t, users, platformPostId, ctx.settings.user_id),
          (t) => t.id,
        ),
        nextCursor: page.meta?.next_token ?? null,
        ...(ancestors.length ? { ancestors } : {}),
      };
    },

    async commentParents(ctx, ids) {
      if (ids.length === 0) return [];
      // X's tweet lookup (v2 `GET /2/tweets`, 1 to 100 ids): hydrated by id past recent search's 7 days; a deleted
      // tweet comes back in `errors`, not `data`. The expansion includes what each answers too: two links a call.
      const answer = await client.send<{ data?: XTweet[]; includes?: { tweets?: XTweet[] } }>(ctx.credentials, {
        method: 'GET',
        path: '/2/tweets',
        query: { ids: ids.slice(0, COMMENT_PARENTS_PER_CALL).join(','), 'tweet.fields': 'referenced_tweets', expansions: 'referenced_tweets.id' },
      });
      const listOf = (v: unknown): XTweet[] => (Array.isArray(v) ? v : []);
      return ancestorsOf([...listOf(answer?.data), ...listOf(answer?.includes?.tweets)]);
    },

    async replyToComment(ctx, _platformPostId, platformCommentId, text) {
      return createTweet(ctx, { postId: '', text, media: [], replyTo: { platformPostId: platformCommentId } }, []);
    },

    // Only the account's own posts can be deleted; X answers 403 for anyone else's (classified permanent).
    deleteComment: (ctx, platformCommentId) => deleteTweet(ctx, platformCommentId),

    readMetrics: (ctx, req) => readXMetrics(client, ctx, req),
  };
}
