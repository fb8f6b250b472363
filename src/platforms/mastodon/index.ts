import type { HttpClient } from '../../net/http';
import { answerOf } from '../answers';
import { listedComments } from '../listed-comments';
import { PlatformFailure, type AccountIdentity, type PlatformAdapter, type PlatformContext, type PublishedPost } from '../types';
import { createMastodonClient } from './client';
import { parseMastodonInstance } from './instance';
import { compareIdsDescending, keyOfGeneration, postIdempotencyKey, replyIdempotencyKey, statusUrl, toComment, verifiedAccountAnswer, type MastodonStatus } from './mapper';
import { uploadMedia } from './media';
import { readMastodonMetrics } from './metrics';
import { beforeCreate, SendStopped } from '../send-stop';

export { parseMastodonInstance } from './instance';

interface MastodonAdapterDeps {
  http: HttpClient;
  /** HERALD_ALLOW_INSECURE_URLS: lets `instance_url` be plain http or a local host (development and tests). */
  allowInsecure?: boolean;
  now?: () => Date;
  sleep?: (ms: number) => Promise<void>;
}

/** How long a Mastodon server keeps an Idempotency-Key (protocols.md section 3: "kept 1 h"). */
const IDEMPOTENCY_KEY_MS = 60 * 60_000;

/** Comments come from `/context` in one piece; Herald pages them itself. */
const COMMENT_PAGE_SIZE = 40;

/**
 * Generations of one Idempotency-Key tried (`createStatus`): a thread's parts are deleted at most once per retry (3)
 * and per credential renewal; past this many deletions within the key's hour the create stays `gone`.
 */
const KEY_GENERATIONS = 10;

interface Account {
  origin: string;
  token: string;
}

/** Mastodon REST adapter. The server is per account: `settings.instance_origin`, set by `verify`. */
export function createMastodonAdapter(deps: MastodonAdapterDeps): PlatformAdapter {
  const now = deps.now ?? (() => new Date());
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const client = createMastodonClient(deps.http, now);
  const media = { client, now, sleep };

  function account(ctx: PlatformContext): Account {
    const token = ctx.credentials.access_token;
    const origin = ctx.settings.instance_origin ?? (ctx.credentials.instance_url && parseMastodonInstance(ctx.credentials.instance_url, deps));
    if (!token || !origin) throw new PlatformFailure('mastodon', 'reauthorize', 'Mastodon account details are missing; reconnect the account.');
    return { origin, token };
  }

  /**
   * Every create carries an Idempotency-Key, so a create whose answer was lost or that met a server error is
   * repeated once at once with the same key: the server returns the status it already made, never a second one.
   * When that repeat fails too, the first may still have made the status: the failure says so
   * (`mayHaveTakenEffect`), so the attempt's mark stays open and a later attempt repeats it only while the key lasts.
   * The same when the call's time is up before the repeat (`stop`): the first may have made it, so not "not sent".
   */
  async function createOnce(ctx: PlatformContext, body: Record<string, unknown>, key: string, stop: AbortSignal | undefined): Promise<PublishedPost> {
    const { origin, token } = account(ctx);
    const send = () =>
      client.send<MastodonStatus>(origin, token, { method: 'POST', path: '/api/v1/statuses', json: body, headers: { 'idempotency-key': key } });
    let created;
    beforeCreate('mastodon', stop);
    try {
      created = await send();
    } catch (err) {
      if (!(err instanceof PlatformFailure) || err.kind !== 'retryable') throw err;
      try {
        beforeCreate('mastodon', stop);
        created = await send();
      } catch (again) {
        const failure = again instanceof SendStopped ? err : again;
        if (failure instanceof PlatformFailure) failure.mayHaveTakenEffect = true;
        throw failure;
      }
    }
    const username = ctx.settings.username ?? created.body.account.username;
    return { platformPostId: created.body.id, url: statusUrl(origin, username, created.body.id) };
  }

  /**
   * A create's 404 is its parent's when it replies to a status that is gone; otherwise the key's status was deleted
   * within the key's hour (Herald rolled a thread back or deleted a reply, then sends the same again): the next
   * generation of the key is tried. Read from the server each time, so a repeat of the same send walks the same
   * generations and finds the status it made, and nothing needs storing.
   */
  async function createStatus(ctx: PlatformContext, body: Record<string, unknown>, key: string, stop?: AbortSignal): Promise<PublishedPost> {
    for (let generation = 0; ; generation += 1) {
      try {
        return await createOnce(ctx, body, keyOfGeneration(key, generation), stop);
      } catch (err) {
        if (!(err instanceof PlatformFailure) || err.kind !== 'gone' || generation + 1 >= KEY_GENERATIONS) throw err;
        if (typeof body.in_reply_to_id === 'string' && !(await statusExists(ctx, body.in_reply_to_id))) throw err;
      }
    }
  }

  async function statusExists(ctx: PlatformContext, id: string): Promise<boolean> {
    const { origin, token } = account(ctx);
    try {
      await client.send(origin, token, { method: 'GET', path: `/api/v1/statuses/${id}` });
      return true;
    } catch (err) {
      if (err instanceof PlatformFailure && err.kind === 'gone') return false;
      throw err;
    }
  }

  async function deleteStatus(ctx: PlatformContext, id: string): Promise<void> {
    const { origin, token } = account(ctx);
    try {
      await client.send(origin, token, { method: 'DELETE', path: `/api/v1/statuses/${id}` });
    } catch (err) {
      // Mastodon answers 404 for a status already deleted (and for one never there).
      if (err instanceof PlatformFailure && err.kind === 'gone') return;
      throw err;
    }
  }

  return {
    platform: 'mastodon',
    // Every create carries an Idempotency-Key derived from the post id (see `createStatus`), which the server keeps
    // for an hour from the status it made (protocols.md section 3).
    repeatedCreatesSafeForMs: IDEMPOTENCY_KEY_MS,

    async verify(ctx): Promise<AccountIdentity> {
      const { origin, token } = account(ctx);
      const { body } = await client.send<unknown>(origin, token, { method: 'GET', path: '/api/v1/accounts/verify_credentials' });
      const host = new URL(origin).host;
      const me = answerOf('mastodon', verifiedAccountAnswer, body, `Mastodon: ${host} did not answer as a Mastodon server.`);
      return {
        // Account ids are only unique within one server.
        platformAccountId: `${me.id}@${host}`,
        username: `${me.username}@${host}`,
        displayName: me.display_name || null,
        profileUrl: me.url || null,
        settings: { instance_origin: origin, account_id: me.id, username: me.username },
      };
    },

    async publish(ctx, req): Promise<PublishedPost> {
      const { origin, token } = account(ctx);
      const mediaIds: string[] = [];
      for (const item of req.media) mediaIds.push(await uploadMedia(media, origin, token, item, req.signal));
      const body = {
        status: req.text,
        ...(mediaIds.length ? { media_ids: mediaIds } : {}),
        ...(req.replyTo ? { in_reply_to_id: req.replyTo.platformPostId } : {}),
      };
      return createStatus(ctx, body, postIdempotencyKey(req.postId), req.signal);
    },

    delete: (ctx, platformPostId) => deleteStatus(ctx, platformPostId),

    async resolveUrl(ctx, platformPostId): Promise<string | null> {
      const { origin } = account(ctx);
      return ctx.settings.username ? statusUrl(origin, ctx.settings.username, platformPostId) : null;
    },

    async listComments(ctx, platformPostId, cursor, read) {
      const { origin, token } = account(ctx);
      // `/context` answers the whole tree: fetched once per read (`read.memo`) and paged here.
      const fetchContext = () =>
        client.send<{ ancestors: MastodonStatus[]; descendants: MastodonStatus[] }>(origin, token, { method: 'GET', path: `/api/v1/statuses/${platformPostId}/context` });
      const { body } = await (read?.memo ? read.memo.once(`mastodon:${origin}:${platformPostId}`, fetchContext) : fetchContext());
      // Newest first; the cursor is the last id handed out, so replies arriving between pages shift nothing.
      const sorted = [...body.descendants].sort((a, b) => compareIdsDescending(a.id, b.id));
      const rest = cursor ? sorted.filter((s) => compareIdsDescending(cursor, s.id) < 0) : sorted;
      const page = rest.slice(0, COMMENT_PAGE_SIZE);
      return {
        ...listedComments(page, (s) => toComment(s, platformPostId, ctx.settings.account_id), (s) => s.id),
        nextCursor: rest.length > COMMENT_PAGE_SIZE ? page[page.length - 1].id : null,
      };
    },

    async replyToComment(ctx, _platformPostId, platformCommentId, text) {
      return createStatus(ctx, { status: text, in_reply_to_id: platformCommentId }, replyIdempotencyKey(platformCommentId, text));
    },

    // Only own statuses can be deleted; Mastodon answers 404 for anyone else's.
    deleteComment: (ctx, platformCommentId) => deleteStatus(ctx, platformCommentId),

    readMetrics: (ctx, req) => readMastodonMetrics(client, account(ctx), req),
  };
}
