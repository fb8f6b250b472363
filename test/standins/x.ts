/**
 * X API v2 stand-in (protocols.md section 1): users/me, tweets create/delete/lookup by ids, recent search by conversation_id,
 * user timeline, media upload v2 (one-shot, initialize/append/finalize, STATUS) and metadata. Errors are
 * problem+json; every answer carries x-rate-limit-* headers. Accepts OAuth 2.0 Bearer user tokens and verifies
 * OAuth 1.0a HMAC-SHA1 signatures with its own implementation of RFC 5849.
 */
import { createHmac } from 'node:crypto';
import { StandIn, StandInReply, type RecordedRequest, type StandInResponse } from './kit';
import { MetricsBook } from './metrics';

export interface XStandInUser {
  id: string;
  username: string;
  name: string;
  subscription_type: 'Basic' | 'Premium' | 'PremiumPlus' | 'None';
  verified_type: 'blue' | 'business' | 'government' | 'none';
  bearerToken?: string;
  oauth1?: { consumerKey: string; consumerSecret: string; token: string; tokenSecret: string };
  scopes: Set<string>;
}

interface XStoredTweet {
  id: string;
  text: string;
  author_id: string;
  created_at: string;
  conversation_id: string;
  in_reply_to_user_id?: string;
  referenced_tweets?: Array<{ type: 'replied_to'; id: string }>;
  media_ids: string[];
  /** `entities.urls`: each t.co link, what it stands for, and the media link's `media_key`. */
  urls: Array<{ url: string; expanded_url: string; display_url: string; media_key?: string }>;
  deleted: boolean;
}

interface StoredMedia {
  id: string;
  category: string;
  mimeType: string;
  totalBytes: number;
  segments: Map<number, number>;
  state: 'uploading' | 'pending' | 'in_progress' | 'succeeded' | 'failed';
  polls: number;
  alt?: string;
  /** The uploader and the `additional_owners` it named: only they may use the id (in a post, or on the upload endpoints). */
  owners: Set<string>;
}

const PROBLEMS = 'https://api.x.com/2/problems';
const WINDOW_S = 15 * 60;

const enc = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

export async function startXStandIn() {
  const standIn = new StandIn('x');
  const users = new Map<string, XStandInUser>();
  const tweets: XStoredTweet[] = [];
  const media = new Map<string, StoredMedia>();
  let nextId = 1860000000000000000n;
  const newId = () => String(++nextId);
  const config = { alreadyDeleted: '404' as '404' | 'deleted_false', videoPollsUntilReady: 2, videoOutcome: 'succeeded' as 'succeeded' | 'failed' };
  const resetAt = () => Math.floor(Date.now() / 1000) + WINDOW_S;
  const limitHeaders = () => ({ 'x-rate-limit-limit': '100', 'x-rate-limit-remaining': '99', 'x-rate-limit-reset': String(resetAt()) });

  function problem(status: number, title: string, detail: string, type = 'about:blank', extra: Record<string, unknown> = {}): never {
    throw new StandInReply({
      status,
      headers: { 'content-type': 'application/problem+json', ...limitHeaders() },
      json: { title, detail, type, status, ...extra },
    });
  }
  function invalid(message: string): never {
    problem(400, 'Invalid Request', 'One or more parameters to your request was invalid.', `${PROBLEMS}/invalid-request`, { errors: [{ message }] });
  }

  function verifyOAuth1(req: RecordedRequest, header: string): XStandInUser | undefined {
    const fields = Object.fromEntries([...header.slice(6).matchAll(/([\w]+)="([^"]*)"/g)].map((m) => [m[1], decodeURIComponent(m[2])]));
    const user = [...users.values()].find((u) => u.oauth1?.consumerKey === fields.oauth_consumer_key && u.oauth1?.token === fields.oauth_token);
    if (!user?.oauth1 || fields.oauth_signature_method !== 'HMAC-SHA1') return undefined;
    const params = [...Object.entries(fields).filter(([k]) => k !== 'oauth_signature'), ...Object.entries(req.query)]
      .map(([k, v]) => `${enc(k)}=${enc(v)}`)
      .sort();
    const base = [req.method, enc(`${standIn.origin}${req.path}`), enc(params.join('&'))].join('&');
    const key = `${enc(user.oauth1.consumerSecret)}&${enc(user.oauth1.tokenSecret)}`;
    return createHmac('sha1', key).update(base).digest('base64') === fields.oauth_signature ? user : undefined;
  }

  /**
   * OAuth 2.0 user tokens that end and renew (protocols.md section 13): access tokens live `accessLifetimeS` by the
   * stand-in's clock; `POST /2/oauth2/token` takes the app's Basic auth (a public client: `client_id` in the form),
   * spends the refresh token it is given and hands out a new pair; a spent, revoked or unknown one is refused.
   */
  const oauth = {
    app: { clientId: 'conformance-client', clientSecret: 'conformance-secret' as string | null },
    accessLifetimeS: 7200,
    access: new Map<string, { userId: string; expiresAt: number }>(),
    refresh: new Map<string, { userId: string; spent: boolean; revoked: boolean }>(),
    /** Every renewal call: the refresh token sent and what became of it. */
    renewals: [] as Array<{ refreshToken: string; outcome: 'renewed' | 'spent' | 'revoked' | 'unknown' | 'bad_client' }>,
  };
  let tokenSerial = 0;
  function issueTokens(userId: string, now: number, lifetimeS = oauth.accessLifetimeS) {
    const serial = ++tokenSerial;
    const pair = { accessToken: `x-access-${serial}-${newId()}`, refreshToken: `x-refresh-${serial}-${newId()}` };
    oauth.access.set(pair.accessToken, { userId, expiresAt: now + lifetimeS * 1000 });
    oauth.refresh.set(pair.refreshToken, { userId, spent: false, revoked: false });
    return pair;
  }
  function oauthError(status: number, error: string, description: string): never {
    throw new StandInReply({ status, json: { error, error_description: description } });
  }
  function renewTokens(req: RecordedRequest): StandInResponse {
    const refreshToken = req.form?.refresh_token ?? '';
    const basic = String(req.headers.authorization ?? '');
    const client = basic.startsWith('Basic ') ? Buffer.from(basic.slice(6), 'base64').toString('utf8') : null;
    const clientOk = oauth.app.clientSecret
      ? client === `${encodeURIComponent(oauth.app.clientId)}:${encodeURIComponent(oauth.app.clientSecret)}`
      : req.form?.client_id === oauth.app.clientId;
    if (!clientOk) {
      oauth.renewals.push({ refreshToken, outcome: 'bad_client' });
      oauthError(401, 'unauthorized_client', 'Missing valid authorization header');
    }
    if (req.form?.grant_type !== 'refresh_token') oauthError(400, 'invalid_request', 'Value passed for the grant type was invalid.');
    const entry = oauth.refresh.get(refreshToken);
    if (!entry || entry.spent || entry.revoked) {
      oauth.renewals.push({ refreshToken, outcome: !entry ? 'unknown' : entry.spent ? 'spent' : 'revoked' });
      oauthError(400, 'invalid_request', 'Value passed for the token was invalid.');
    }
    entry.spent = true;
    oauth.renewals.push({ refreshToken, outcome: 'renewed' });
    const pair = issueTokens(entry.userId, req.now);
    return {
      status: 200,
      json: { token_type: 'bearer', expires_in: oauth.accessLifetimeS, access_token: pair.accessToken, scope: 'tweet.read tweet.write users.read offline.access', refresh_token: pair.refreshToken },
    };
  }
  function oauthUser(req: RecordedRequest, token: string): XStandInUser | undefined {
    const issued = oauth.access.get(token);
    if (!issued || issued.expiresAt <= req.now) return undefined;
    return users.get(issued.userId);
  }

  function authenticate(req: RecordedRequest): XStandInUser {
    const header = String(req.headers.authorization ?? '');
    const user = header.startsWith('Bearer ')
      ? (oauthUser(req, header.slice(7)) ?? [...users.values()].find((u) => u.bearerToken && u.bearerToken === header.slice(7)))
      : header.startsWith('OAuth ')
        ? verifyOAuth1(req, header)
        : undefined;
    if (!user) problem(401, 'Unauthorized', 'Unauthorized');
    return user;
  }

  function requireMediaWrite(user: XStandInUser): void {
    if (!user.scopes.has('media.write')) problem(403, 'Forbidden', 'Forbidden');
  }

  const ok = (json: unknown, status = 200): StandInResponse => ({ status, json, headers: limitHeaders() });

  function userShape(u: XStandInUser, fields: string | undefined) {
    const wanted = new Set((fields ?? '').split(',').filter(Boolean));
    const all: Record<string, unknown> = {
      profile_image_url: `https://pbs.twimg.com/profile_images/${u.id}/normal.jpg`,
      verified: u.verified_type !== 'none',
      verified_type: u.verified_type,
      subscription_type: u.subscription_type,
    };
    return { id: u.id, name: u.name, username: u.username, ...Object.fromEntries(Object.entries(all).filter(([k]) => wanted.has(k))) };
  }

  function tweetShape(t: XStoredTweet, fields: string | undefined) {
    const wanted = new Set((fields ?? '').split(',').filter(Boolean));
    const replies = tweets.filter((r) => !r.deleted && r.referenced_tweets?.some((ref) => ref.id === t.id)).length;
    const all: Record<string, unknown> = {
      author_id: t.author_id,
      created_at: t.created_at,
      conversation_id: t.conversation_id,
      in_reply_to_user_id: t.in_reply_to_user_id,
      referenced_tweets: t.referenced_tweets,
      public_metrics: { retweet_count: 0, reply_count: replies, like_count: 0, quote_count: 0 },
      attachments: t.media_ids.length ? { media_keys: t.media_ids.map(mediaKeyOf) } : undefined,
      entities: t.urls.length ? { urls: t.urls.map((u) => ({ start: codePointIndex(t.text, u.url), end: codePointIndex(t.text, u.url) + u.url.length, ...u })) } : undefined,
    };
    const picked = Object.entries(all).filter(([k, v]) => wanted.has(k) && v !== undefined);
    return { id: t.id, text: t.text, edit_history_tweet_ids: [t.id], ...Object.fromEntries(picked) };
  }

  /** What X stores: links become t.co links, attached media add one more, and &, <, > are escaped. */
  function storedText(text: string, withMedia: boolean): string {
    return storedPost(text, withMedia, '').text;
  }

  /** `storedText` with the `entities.urls` it makes: each link's t.co link, and the media's (`media_key`) last. */
  function storedPost(text: string, withMedia: boolean, mediaPage: string, mediaKey?: string) {
    const urls: XStoredTweet['urls'] = [];
    const tco = () => `https://t.co/${newId().slice(-10)}`;
    // X ends a link before trailing punctuation.
    const linked = text.replace(/https?:\/\/\S*[^\s.,;:!?'")\]]/g, (link) => {
      const url = tco();
      urls.push({ url, expanded_url: link, display_url: link.replace(/^https?:\/\//, '').slice(0, 25) });
      return url;
    });
    const escaped = linked.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
    if (!withMedia) return { text: escaped, urls };
    const url = tco();
    urls.push({ url, expanded_url: mediaPage, display_url: 'pic.x.com/' + url.slice(-10), ...(mediaKey ? { media_key: mediaKey } : {}) });
    return { text: `${escaped} ${url}`.trim(), urls };
  }

  const codePointIndex = (text: string, part: string) => [...text.slice(0, text.indexOf(part))].length;

  function mediaKeyOf(id: string): string {
    return `${media.get(id)?.category === 'tweet_video' ? 7 : 3}_${id}`;
  }

  function weightedLength(text: string): number {
    return [...text.replace(/https?:\/\/\S+/g, 'x'.repeat(23))].reduce((n, ch) => n + (ch.codePointAt(0)! > 0x10ff ? 2 : 1), 0);
  }

  function addTweet(author: XStandInUser, text: string, mediaIds: string[], parent?: XStoredTweet): XStoredTweet {
    const id = newId();
    const stored = storedPost(text, mediaIds.length > 0, `https://x.com/${author.username}/status/${id}/photo/1`, mediaIds.length ? mediaKeyOf(mediaIds[0]) : undefined);
    const tweet: XStoredTweet = {
      id,
      text: stored.text,
      urls: stored.urls,
      author_id: author.id,
      created_at: new Date().toISOString(),
      conversation_id: parent ? parent.conversation_id : id,
      ...(parent ? { in_reply_to_user_id: parent.author_id, referenced_tweets: [{ type: 'replied_to' as const, id: parent.id }] } : {}),
      media_ids: mediaIds,
      deleted: false,
    };
    tweets.push(tweet);
    return tweet;
  }

  const live = (id: string) => tweets.find((t) => t.id === id && !t.deleted);

  function createTweet(req: RecordedRequest): StandInResponse {
    const user = authenticate(req);
    const body = req.json ?? {};
    const text: string = typeof body.text === 'string' ? body.text : '';
    const mediaIds: string[] = body.media?.media_ids ?? [];
    if (!text && mediaIds.length === 0) invalid('The `text` field is required when `media` is absent.');
    if (mediaIds.length > 4) invalid('`media.media_ids` has more than 4 items.');
    for (const id of mediaIds) {
      const m = media.get(id);
      // Another user's media is refused as X refuses an id uploaded with another token (v1.1 code 324; v2 this detail).
      if (m && !m.owners.has(user.id)) invalid('Your media IDs are invalid.');
      if (m?.state !== 'succeeded') invalid(`Media id ${id} is not valid.`);
    }
    const limit = user.subscription_type === 'None' ? 280 : 25_000;
    if (weightedLength(text) > limit) invalid('Your post text is too long.');
    const parentId: string | undefined = body.reply?.in_reply_to_tweet_id;
    const parent = parentId ? live(parentId) : undefined;
    if (parentId && !parent) invalid('The post you are replying to was not found or has been deleted.');
    const duplicate = tweets.some((t) => !t.deleted && t.author_id === user.id && t.text === storedText(text, false) && text !== '' && mediaIds.length === 0);
    if (duplicate) problem(403, 'Forbidden', 'You are not allowed to create a Tweet with duplicate content.');
    const tweet = addTweet(user, text, mediaIds, parent);
    return ok({ data: { id: tweet.id, text: tweet.text, edit_history_post_ids: [tweet.id] } }, 201);
  }

  function deleteTweet(req: RecordedRequest): StandInResponse {
    const user = authenticate(req);
    const tweet = live(req.params.id);
    if (!tweet) {
      if (config.alreadyDeleted === 'deleted_false') return ok({ data: { deleted: false } });
      problem(404, 'Not Found Error', `Could not find post with id: [${req.params.id}].`, `${PROBLEMS}/resource-not-found`, {
        resource_type: 'tweet',
        parameter: 'id',
        value: req.params.id,
      });
    }
    if (tweet.author_id !== user.id) problem(403, 'Forbidden', 'You are not allowed to delete this Post.');
    tweet.deleted = true;
    return ok({ data: { deleted: true } });
  }

  function maxResults(raw: string | undefined, min: number, fallback: number): number {
    const n = raw === undefined ? fallback : Number(raw);
    if (!Number.isInteger(n) || n < min || n > 100) invalid(`The \`max_results\` query parameter value [${raw}] is not between ${min} and 100`);
    return n;
  }

  function page(list: XStoredTweet[], req: RecordedRequest, size: number, tokenParam: 'next_token' | 'pagination_token') {
    const offset = req.query[tokenParam] ? Number(Buffer.from(req.query[tokenParam], 'base64url').toString().slice(4)) : 0;
    const slice = list.slice(offset, offset + size);
    const more = offset + size < list.length;
    const meta: Record<string, unknown> = { result_count: slice.length };
    if (slice.length) Object.assign(meta, { newest_id: slice[0].id, oldest_id: slice[slice.length - 1].id });
    if (more) meta.next_token = Buffer.from(`page${offset + size}`).toString('base64url');
    return { slice, meta };
  }

  const newestFirst = (a: XStoredTweet, b: XStoredTweet) => (BigInt(b.id) > BigInt(a.id) ? 1 : -1);

  const RECENT_SEARCH_DAYS = 7;

  function searchRecent(req: RecordedRequest): StandInResponse {
    authenticate(req);
    const m = /^conversation_id:(\d+)$/.exec(req.query.query ?? '');
    if (!m) invalid('Only conversation_id queries are supported by this stand-in.');
    const size = maxResults(req.query.max_results, 10, 10);
    // Recent search reaches back 7 days only (protocols.md section 1): an older reply is not found.
    const since = Date.now() - RECENT_SEARCH_DAYS * 86_400_000;
    const matches = tweets.filter((t) => !t.deleted && t.conversation_id === m[1] && t.id !== m[1] && Date.parse(t.created_at) >= since).sort(newestFirst);
    const { slice, meta } = page(matches, req, size, 'next_token');
    if (!slice.length) return ok({ meta });
    return ok({
      data: slice.map((t) => tweetShape(t, req.query['tweet.fields'])),
      ...includesOf(slice, req),
      meta,
    });
  }

  /**
   * `expansions`: `author_id` includes the authors; `referenced_tweets.id` the tweets the page's tweets reference,
   * hydrated by id whatever their age (a deleted one is left out), with the same `tweet.fields`.
   */
  function includesOf(slice: XStoredTweet[], req: RecordedRequest) {
    const expansions = (req.query.expansions ?? '').split(',');
    const includes: Record<string, unknown[]> = {};
    if (expansions.includes('author_id')) {
      includes.users = [...new Set(slice.map((t) => t.author_id))].map((id) => users.get(id)!).filter(Boolean).map((u) => userShape(u, req.query['user.fields']));
    }
    if (expansions.includes('referenced_tweets.id')) {
      const ids = new Set(slice.flatMap((t) => (t.referenced_tweets ?? []).map((r) => r.id)));
      const referenced = tweets.filter((t) => ids.has(t.id) && !t.deleted).map((t) => tweetShape(t, req.query['tweet.fields']));
      if (referenced.length) includes.tweets = referenced;
    }
    return Object.keys(includes).length ? { includes } : {};
  }

  /**
   * `start_time` / `end_time` of a timeline: RFC 3339 timestamps, second granularity, inclusive (X's docs: user
   * Tweet timeline); a malformed one is a 400 as any invalid parameter.
   */
  function timeBound(raw: string | undefined, name: string): number | undefined {
    if (raw === undefined) return undefined;
    const at = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/.test(raw) ? Date.parse(raw) : NaN;
    if (!Number.isFinite(at)) invalid(`Invalid '${name}':'${raw}'. '${name}' must be a valid RFC 3339 date.`);
    return Math.floor(at / 1000) * 1000;
  }

  /** The most recent posts a user timeline reaches (X's docs: "the most recent 3,200 Tweets can be retrieved"). */
  const TIMELINE_REACH = 3_200;

  /**
   * `GET /2/tweets?ids=` (X API v2 tweet lookup): 1 to 100 comma-separated numeric ids, else 400; each live tweet in
   * `data` whatever its age (only recent search stops at 7 days), each missing or deleted one as a
   * `resource-not-found` entry of `errors` (still 200); `tweet.fields` and `expansions` as for search.
   */
  function lookupTweets(req: RecordedRequest): StandInResponse {
    authenticate(req);
    const ids = (req.query.ids ?? '').split(',');
    if (!req.query.ids || ids.length > 100 || ids.some((id) => !/^\d{1,19}$/.test(id))) {
      invalid(`The \`ids\` query parameter value [${req.query.ids ?? ''}] is not 1 to 100 comma-separated post ids`);
    }
    const found = ids.map((id) => live(id)).filter((t): t is XStoredTweet => t !== undefined);
    const missing = ids.filter((id) => !live(id));
    const errors = missing.map((id) => ({
      value: id, detail: `Could not find tweet with ids: [${id}].`, title: 'Not Found Error', resource_type: 'tweet', parameter: 'ids', resource_id: id, type: `${PROBLEMS}/resource-not-found`,
    }));
    return ok({
      ...(found.length ? { data: found.map((t) => tweetShape(t, req.query['tweet.fields'])), ...includesOf(found, req) } : {}),
      ...(errors.length ? { errors } : {}),
    });
  }

  function userTweets(req: RecordedRequest): StandInResponse {
    authenticate(req);
    const size = maxResults(req.query.max_results, 5, 10);
    const from = timeBound(req.query.start_time, 'start_time');
    const to = timeBound(req.query.end_time, 'end_time');
    const own = tweets
      .filter((t) => !t.deleted && t.author_id === req.params.id)
      .sort(newestFirst)
      .slice(0, TIMELINE_REACH)
      .filter((t) => (from === undefined || Date.parse(t.created_at) >= from) && (to === undefined || Date.parse(t.created_at) < to + 1_000));
    const { slice, meta } = page(own, req, size, 'pagination_token');
    return ok(slice.length ? { data: slice.map((t) => tweetShape(t, req.query['tweet.fields'])), meta } : { meta });
  }

  function mediaShape(m: StoredMedia) {
    const processing = m.state === 'succeeded' && m.category !== 'tweet_video' ? undefined : m.state === 'uploading' ? undefined : m.state;
    return {
      id: m.id,
      media_key: mediaKeyOf(m.id),
      size: m.totalBytes,
      expires_after_secs: 86400,
      ...(processing ? { processing_info: { state: processing, ...(processing === 'pending' || processing === 'in_progress' ? { check_after_secs: 1, progress_percent: processing === 'pending' ? 0 : 50 } : {}) } } : {}),
    };
  }

  /** The caller's media: another user's id is answered as an unknown one (X does not say whose media exists). */
  function ownedMedia(id: string, caller: XStandInUser): StoredMedia {
    const m = media.get(id);
    if (!m || !m.owners.has(caller.id)) problem(404, 'Not Found Error', `Could not find media with id: [${id}].`, `${PROBLEMS}/resource-not-found`);
    return m;
  }

  /** `additional_owners` of an upload (a JSON array, or comma-separated in a form): user ids that may use the media too. */
  function ownersOf(uploader: XStandInUser, additional: unknown): Set<string> {
    const others = Array.isArray(additional) ? additional.map(String) : typeof additional === 'string' ? additional.split(',').filter(Boolean) : [];
    return new Set([uploader.id, ...others]);
  }

  const metrics = new MetricsBook();
  const NON_PUBLIC_DAYS = 30;

  /** `GET /2/tweets/:id` with public/non-public metrics and the video's view count (protocols.md section 12). */
  function readTweet(req: RecordedRequest): StandInResponse {
    const user = authenticate(req);
    const tweet = live(req.params.id);
    if (!tweet) {
      return ok({ errors: [{ value: req.params.id, detail: `Could not find tweet with id: [${req.params.id}].`, title: 'Not Found Error', resource_type: 'tweet', parameter: 'id', resource_id: req.params.id, type: `${PROBLEMS}/resource-not-found` }] });
    }
    const fields = new Set((req.query['tweet.fields'] ?? '').split(','));
    const m = metrics.get(tweet.id);
    const replies = tweets.filter((r) => !r.deleted && r.referenced_tweets?.some((ref) => ref.id === tweet.id)).length;
    const data: Record<string, unknown> = { id: tweet.id, text: tweet.text, edit_history_tweet_ids: [tweet.id] };
    const errors: unknown[] = [];
    if (fields.has('public_metrics')) {
      data.public_metrics = {
        retweet_count: m.reposts ?? 0, reply_count: m.replies ?? replies, like_count: m.likes ?? 0, quote_count: m.quotes ?? 0,
        bookmark_count: m.bookmarks ?? 0, impression_count: m.impressions ?? 0,
      };
    }
    if (fields.has('non_public_metrics')) {
      const recent = Date.now() - Date.parse(tweet.created_at) <= NON_PUBLIC_DAYS * 86_400_000;
      if (tweet.author_id === user.id && recent) {
        // `url_link_clicks` is absent for posts without a link (here: without clicks set).
        data.non_public_metrics = { impression_count: m.impressions ?? 0, user_profile_clicks: 0, ...(m.clicks === undefined ? {} : { url_link_clicks: m.clicks }) };
      } else {
        errors.push({ value: tweet.id, detail: 'Sorry, you are not authorized to access non_public_metrics on this Tweet.', title: 'Field Authorization Error', resource_type: 'tweet', parameter: 'non_public_metrics', resource_id: tweet.id, section: 'data', field: 'non_public_metrics', type: `${PROBLEMS}/not-authorized-for-field` });
      }
    }
    const mediaKeys = tweet.media_ids.map((id) => mediaShape(media.get(id)!).media_key);
    const includes: Record<string, unknown> = {};
    if (req.query.expansions?.includes('attachments.media_keys') && mediaKeys.length) {
      data.attachments = { media_keys: mediaKeys };
      includes.media = tweet.media_ids.map((id) => {
        const item = media.get(id)!;
        const video = item.category === 'tweet_video';
        return { media_key: mediaShape(item).media_key, type: video ? 'video' : 'photo', ...(video ? { public_metrics: { view_count: m.video_views ?? 0 } } : {}) };
      });
    }
    return ok({ data, ...(Object.keys(includes).length ? { includes } : {}), ...(errors.length ? { errors } : {}) });
  }

  standIn
    .on('GET', '/2/users/me', (req) => ok({ data: userShape(authenticate(req), req.query['user.fields']) }))
    .on('GET', '/2/tweets', lookupTweets)
    .on('GET', '/2/tweets/:id', readTweet)
    .on('POST', '/2/tweets', createTweet)
    .on('DELETE', '/2/tweets/:id', deleteTweet)
    .on('GET', '/2/tweets/search/recent', searchRecent)
    .on('GET', '/2/users/:id/tweets', userTweets)
    .on('POST', '/2/media/upload', (req) => {
      const uploader = authenticate(req);
      requireMediaWrite(uploader);
      const file = req.multipart?.find((p) => p.name === 'media' && p.file)?.file;
      if (!file) invalid('The `media` field is required.');
      const owners = ownersOf(uploader, req.form?.additional_owners);
      const m: StoredMedia = { id: newId(), category: req.form?.media_category ?? 'tweet_image', mimeType: file.mimeType, totalBytes: file.data.length, segments: new Map(), state: 'succeeded', polls: 0, owners };
      media.set(m.id, m);
      return ok({ data: { ...mediaShape(m), image: { image_type: m.mimeType, w: 1, h: 1 } } });
    })
    .on('GET', '/2/media/upload', (req) => {
      const caller = authenticate(req);
      requireMediaWrite(caller);
      if (req.query.command !== 'STATUS') invalid('Unsupported command.');
      const m = ownedMedia(req.query.media_id, caller);
      if (m.state === 'pending' || m.state === 'in_progress') {
        m.polls += 1;
        m.state = m.polls >= config.videoPollsUntilReady ? config.videoOutcome : 'in_progress';
      }
      return ok({ data: mediaShape(m) });
    })
    .on('POST', '/2/media/upload/initialize', (req) => {
      const uploader = authenticate(req);
      requireMediaWrite(uploader);
      const { media_type, total_bytes, media_category, additional_owners } = req.json ?? {};
      if (typeof media_type !== 'string' || !Number.isInteger(total_bytes)) invalid('`media_type` and `total_bytes` are required.');
      const owners = ownersOf(uploader, additional_owners);
      const m: StoredMedia = { id: newId(), category: media_category ?? 'tweet_video', mimeType: media_type, totalBytes: total_bytes, segments: new Map(), state: 'uploading', polls: 0, owners };
      media.set(m.id, m);
      return ok({ data: { id: m.id, media_key: `7_${m.id}`, expires_after_secs: 86400 } });
    })
    .on('POST', '/2/media/upload/:id/append', (req) => {
      const caller = authenticate(req);
      requireMediaWrite(caller);
      const m = ownedMedia(req.params.id, caller);
      const index = Number(req.form?.segment_index);
      const chunk = req.multipart?.find((p) => p.name === 'media' && p.file)?.file;
      if (!chunk || !Number.isInteger(index) || index < 0 || index > 999) invalid('`media` and `segment_index` (0-999) are required.');
      m.segments.set(index, chunk.data.length);
      return ok({ data: { expires_at: Math.floor(Date.now() / 1000) + 86400 } });
    })
    .on('POST', '/2/media/upload/:id/finalize', (req) => {
      const caller = authenticate(req);
      requireMediaWrite(caller);
      const m = ownedMedia(req.params.id, caller);
      const received = [...m.segments.values()].reduce((a, b) => a + b, 0);
      if (received !== m.totalBytes) invalid(`Received ${received} bytes, expected ${m.totalBytes}.`);
      m.state = m.category === 'tweet_video' ? 'pending' : 'succeeded';
      return ok({ data: mediaShape(m) });
    })
    .on('POST', '/2/media/metadata', (req) => {
      const caller = authenticate(req);
      requireMediaWrite(caller);
      const { id, metadata } = req.json ?? {};
      const m = ownedMedia(String(id), caller);
      const text = metadata?.alt_text?.text;
      if (typeof text !== 'string' || text.length > 1000) invalid('`metadata.alt_text.text` must be 1-1000 characters.');
      m.alt = text;
      return ok({ data: { id: m.id, associated_metadata: { alt_text: { text } } } });
    });
  standIn.on('POST', '/2/oauth2/token', renewTokens);
  const origin = await standIn.start();

  return {
    standIn,
    origin,
    oauth,
    /** An OAuth 2.0 token pair for the user (scope offline.access), its access token ending `lifetimeS` after `now`. */
    issueTokens: (user: XStandInUser, now: number, lifetimeS?: number) => issueTokens(user.id, now, lifetimeS),
    /** The access token ends now (X then answers 401 about:blank). */
    expireAccessToken(token: string) {
      const issued = oauth.access.get(token);
      if (issued) issued.expiresAt = -Infinity;
    },
    /** The user revoked the app: the refresh token is refused from now on. */
    revokeRefreshToken(token: string) {
      const entry = oauth.refresh.get(token);
      if (entry) entry.revoked = true;
    },
    addUser(opts: { username: string; bearerToken?: string; oauth1?: XStandInUser['oauth1']; scopes?: string[]; subscription_type?: XStandInUser['subscription_type']; verified_type?: XStandInUser['verified_type'] }): XStandInUser {
      const user: XStandInUser = {
        id: String(1000 + users.size + 1),
        username: opts.username,
        name: opts.username.replace(/^./, (c) => c.toUpperCase()),
        subscription_type: opts.subscription_type ?? 'None',
        verified_type: opts.verified_type ?? 'none',
        bearerToken: opts.bearerToken,
        oauth1: opts.oauth1,
        scopes: new Set(opts.scopes ?? ['tweet.read', 'tweet.write', 'users.read', 'media.write', 'offline.access']),
      };
      users.set(user.id, user);
      return user;
    },
    /** Someone replies to a post (or to a reply); returns the new reply. */
    addReply(to: string, author: XStandInUser, text: string): XStoredTweet {
      const parent = live(to);
      if (!parent) throw new Error(`no live post ${to}`);
      return addTweet(author, text, [], parent);
    },
    /** The user posts outside Herald (by hand, another app); returns the new post. */
    addPost: (author: XStandInUser, text: string): XStoredTweet => addTweet(author, text, []),
    tweets: () => tweets,
    liveTweets: () => tweets.filter((t) => !t.deleted),
    media: (id: string) => media.get(id),
    config,
    /** Numbers the metrics endpoint reports for a post, in Herald's keys. */
    setMetrics: (id: string, values: Parameters<MetricsBook['set']>[1]) => metrics.set(id, values),
    /** The next `times` matching requests get 429 with X's headers; `reset` is epoch seconds. */
    rateLimit(path: string | RegExp, reset: number, times = 1, problemType = 'about:blank') {
      standIn.inject(
        { path },
        {
          kind: 'reply',
          response: {
            status: 429,
            headers: { 'content-type': 'application/problem+json', 'x-rate-limit-limit': '100', 'x-rate-limit-remaining': '0', 'x-rate-limit-reset': String(reset) },
            json: { title: 'Too Many Requests', detail: 'Too Many Requests', type: problemType, status: 429 },
          },
        },
        times,
      );
    },
    stop: () => standIn.stop(),
  };
}

export type XStandIn = Awaited<ReturnType<typeof startXStandIn>>;
