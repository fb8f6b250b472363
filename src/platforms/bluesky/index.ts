import { RichText } from '@atproto/api';
import type { HttpClient } from '../../net/http';
import {
  PlatformFailure,
  type AccountIdentity,
  type CommentPage,
  type MediaItem,
  type PlatformAdapter,
  type PlatformContext,
  type PublishedPost,
} from '../types';
import { transportCause } from '../transport';
import { BLUESKY_DEFAULT_SERVICE, checkServiceUrl } from './account';
import { createBlueskyClient, type BlueskySession } from './client';
import { isSessionError, lostCreate, xrpcErrorName } from './errors';
import { uploadImages } from './media';
import { readBlueskyMetrics } from './metrics';
import {
  commentsOfThread,
  pageAfter,
  parseAtUri,
  POST_COLLECTION,
  postRecord,
  postUrl,
  profileUrl,
  replyRefs,
  THREAD_DEPTH,
  withoutUnresolvedMentions,
  type AtUri,
} from './mapper';
import { freshRkey, rkeyForPost, rkeyForReply } from './tid';
import { beforeCreate } from '../send-stop';

export { checkServiceUrl, isAppPassword } from './account';
export { rkeyForPost } from './tid';

interface BlueskyAdapterDeps {
  http: HttpClient;
  /** The service of accounts that name no `service_url`; https://bsky.social when absent. */
  origin?: string;
  /** HERALD_ALLOW_INSECURE_URLS: lets `service_url` be plain http or a loopback/private address. */
  allowInsecure?: boolean;
  now?: () => Date;
}

interface StoredRecord {
  uri: string;
  cid: string;
  value: { text?: string; reply?: unknown } & Record<string, unknown>;
}

/**
 * Bluesky adapter over `@atproto/api` (its HTTP goes through Herald's client, see `fetch.ts`). Posts are records of
 * `app.bsky.feed.post` in the account's repo, keyed by a TID derived from Herald's post id: a repeated create hits the
 * same key, which the PDS refuses (500), and the adapter then finds the post already there. platformPostId is the
 * post's at-uri; comments are the replies of `app.bsky.feed.getPostThread`; only own replies can be deleted.
 */
export function createBlueskyAdapter(deps: BlueskyAdapterDeps): PlatformAdapter {
  const now = deps.now ?? (() => new Date());
  const client = createBlueskyClient({
    http: deps.http,
    defaultService: deps.origin ?? BLUESKY_DEFAULT_SERVICE,
    allowInsecure: deps.allowInsecure ?? false,
    now,
  });

  function postRef(platformPostId: string, what = 'post'): AtUri {
    const uri = parseAtUri(platformPostId);
    if (!uri || uri.collection !== POST_COLLECTION) {
      throw new PlatformFailure('bluesky', 'permanent', `Herald does not recognise this Bluesky ${what} id.`);
    }
    return uri;
  }

  /** The stored record, or null when the PDS says it does not exist. */
  async function readRecord(session: BlueskySession, ref: AtUri): Promise<StoredRecord | null> {
    try {
      const res = await session.agent.com.atproto.repo.getRecord({ repo: ref.repo, collection: ref.collection, rkey: ref.rkey });
      return { uri: res.data.uri, cid: res.data.cid ?? '', value: res.data.value as StoredRecord['value'] };
    } catch (err) {
      if (xrpcErrorName(err) === 'RecordNotFound') return null;
      throw err;
    }
  }

  function published(session: BlueskySession, rkey: string): PublishedPost {
    return { platformPostId: `at://${session.did}/${POST_COLLECTION}/${rkey}`, url: postUrl(session.handle, rkey) };
  }

  async function facetsFor(session: BlueskySession, text: string): Promise<unknown[]> {
    const rich = new RichText({ text });
    await rich.detectFacets(session.agent);
    return withoutUnresolvedMentions(rich.facets as never);
  }

  /**
   * Creates a post at a key we chose. After any failed create, the key is looked up: a record there with the same
   * text is our post (a repeated create answers 500 on a real PDS). A create with no answer whose key is still free
   * can be sent again safely, because it can only ever land at this key.
   */
  async function createPost(
    ctx: PlatformContext,
    rkey: string,
    text: string,
    media: MediaItem[],
    parent?: { ref: AtUri; missing: 'gone' | 'permanent' },
    stop?: AbortSignal,
  ): Promise<PublishedPost> {
    return client.run(ctx, async (session) => {
      let reply;
      if (parent) {
        const found = await readRecord(session, parent.ref);
        if (!found) {
          throw new PlatformFailure('bluesky', parent.missing, 'Bluesky no longer has the post this one replies to.');
        }
        reply = replyRefs({ uri: found.uri, cid: found.cid }, found.value);
      }
      const embed = await uploadImages(session.agent, media);
      const record = postRecord({ text, createdAt: now(), facets: await facetsFor(session, text), embed, reply });
      // Here, inside `op`: a session renewed runs it again, and that create must be checked too.
      beforeCreate('bluesky', stop);
      try {
        await session.agent.com.atproto.repo.createRecord({ repo: session.did, collection: POST_COLLECTION, rkey, record });
        return published(session, rkey);
      } catch (err) {
        if (isSessionError(err)) throw err; // not executed; the client renews the session and runs this again
        let existing: StoredRecord | null | undefined;
        try {
          existing = await readRecord(session, { repo: session.did, collection: POST_COLLECTION, rkey });
        } catch {
          existing = undefined; // could not look
        }
        if (existing && existing.value.text === text) return published(session, rkey);
        if (existing) {
          throw new PlatformFailure('bluesky', 'permanent', 'Bluesky already holds a different post under the key Herald uses for this one.');
        }
        const transport = transportCause(err);
        if (transport?.phase === 'unknown' && existing === null) {
          throw new PlatformFailure('bluesky', 'retryable', 'Bluesky did not answer in time and the post is not there; sending it again is safe.', undefined, {
            body: transport.message,
          });
        }
        if (transport?.phase === 'unknown') throw lostCreate(err);
        throw err;
      }
    });
  }

  async function deleteOwn(ctx: PlatformContext, platformId: string, what: 'post' | 'reply'): Promise<void> {
    const ref = postRef(platformId, what);
    try {
      await client.run(ctx, async (session) => {
        if (ref.repo !== session.did) {
          throw new PlatformFailure('bluesky', 'permanent', `Bluesky lets an account delete only its own ${what === 'post' ? 'posts' : 'replies'}.`);
        }
        // Deleting a record that is already gone answers 200 {} on Bluesky.
        await session.agent.com.atproto.repo.deleteRecord({ repo: session.did, collection: ref.collection, rkey: ref.rkey });
      });
    } catch (err) {
      if (err instanceof PlatformFailure && err.kind === 'gone') return;
      throw err;
    }
  }

  return {
    platform: 'bluesky',

    async verify(ctx): Promise<AccountIdentity> {
      const session = await client.login(ctx);
      const profile = await client.run(ctx, (s) => readRecord(s, { repo: s.did, collection: 'app.bsky.actor.profile', rkey: 'self' }));
      const displayName = typeof profile?.value.displayName === 'string' && profile.value.displayName ? profile.value.displayName : null;
      const service = checkServiceUrl(ctx.credentials.service_url || deps.origin || BLUESKY_DEFAULT_SERVICE, deps.allowInsecure ?? false);
      return {
        platformAccountId: session.did,
        username: session.handle,
        displayName,
        profileUrl: profileUrl(session.handle),
        settings: { did: session.did, handle: session.handle, service_url: service.ok ? service.serviceUrl : '' },
      };
    },

    publish(ctx, req) {
      const parent = req.replyTo ? { ref: postRef(req.replyTo.platformPostId), missing: 'permanent' as const } : undefined;
      return createPost(ctx, rkeyForPost(req.postId), req.text, req.media, parent, req.signal);
    },

    findPublished(ctx, req) {
      const rkey = rkeyForPost(req.postId);
      return client.run(ctx, async (session) => {
        const existing = await readRecord(session, { repo: session.did, collection: POST_COLLECTION, rkey });
        return existing && existing.value.text === req.text ? published(session, rkey) : null;
      });
    },

    delete(ctx, platformPostId) {
      return deleteOwn(ctx, platformPostId, 'post');
    },

    resolveUrl(ctx, platformPostId) {
      const ref = postRef(platformPostId);
      return client.run(ctx, async (session) => {
        const existing = await readRecord(session, ref);
        return existing ? postUrl(ref.repo === session.did ? session.handle : ref.repo, ref.rkey) : null;
      });
    },

    listComments(ctx, platformPostId, cursor, read): Promise<CommentPage> {
      const ref = postRef(platformPostId);
      return client.run(ctx, async (session) => {
        // `getPostThread` answers the whole tree (no cursor): fetched once per read (`read.memo`) and paged here.
        const fetchThread = async () => {
          const res = await session.agent.app.bsky.feed.getPostThread({ uri: platformPostId, depth: THREAD_DEPTH, parentHeight: 0 });
          return commentsOfThread(res.data.thread, session.did, now());
        };
        const listed = await (read?.memo ? read.memo.once(`bluesky:${session.did}:${platformPostId}`, fetchThread) : fetchThread());
        let page: Pick<CommentPage, 'comments' | 'nextCursor'>;
        try {
          page = pageAfter(listed.comments, cursor);
        } catch {
          throw new PlatformFailure('bluesky', 'permanent', `The comment cursor for the Bluesky post ${ref.rkey} is not valid.`);
        }
        // What the tree held unreadable is told once, with the first page.
        return cursor || !listed.unreadable ? page : { ...page, unreadable: listed.unreadable };
      });
    },

    replyToComment(ctx, _platformPostId, platformCommentId, text, attemptId) {
      const rkey = attemptId ? rkeyForReply(attemptId) : freshRkey(now());
      return createPost(ctx, rkey, text, [], { ref: postRef(platformCommentId, 'comment'), missing: 'gone' });
    },

    deleteComment(ctx, platformCommentId) {
      return deleteOwn(ctx, platformCommentId, 'reply');
    },

    readMetrics: (ctx, req) => readBlueskyMetrics(client, ctx, req),
  };
}
