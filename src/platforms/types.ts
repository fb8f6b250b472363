/**
 * The one interface every platform adapter implements. The core (API, workflows, activities) knows only this file
 * and the capability table in `capabilities.ts`; everything that differs between platforms lives in
 * `src/platforms/<platform>/`.
 */

export const platformSlugs = ['x', 'bluesky', 'linkedin', 'threads', 'mastodon', 'instagram', 'facebook', 'telegram'] as const;
export type PlatformSlug = (typeof platformSlugs)[number];

/** Decrypted credentials and settings of one connected account, as the adapter needs them. Shape is per platform. */
export type AccountCredentials = Record<string, string | undefined>;

/** What `verify` learns about the account; stored on the account row. */
export interface AccountIdentity {
  /** The platform's stable id for the account (user id, DID, page id, chat id...). Reconnecting matches on it. */
  platformAccountId: string;
  username: string;
  displayName: string | null;
  profileUrl: string | null;
  /** x: premium accounts get 25,000 characters. */
  premium?: boolean;
  /** linkedin: 'profile' or 'page'; instagram via facebook etc. */
  kind?: 'profile' | 'page' | null;
  /** Settings the adapter derived and wants back on every call (for example a normalised instance origin, a person URN). */
  settings?: Record<string, string>;
}

export interface MediaItem {
  /** Bytes already downloaded and checked by the media layer. */
  data: Buffer;
  mimeType: string;
  /** A public URL for the same bytes, for platforms that fetch media themselves (Graph APIs). */
  publicUrl?: string;
  alt?: string;
  kind: 'image' | 'video';
  width?: number;
  height?: number;
  durationMs?: number;
}

export interface PublishRequest {
  /** Herald's post id. Adapters derive platform idempotency from it (Mastodon Idempotency-Key, Bluesky rkey). */
  postId: string;
  text: string;
  media: MediaItem[];
  /** Platform post id of the post this one answers (thread parts, first comments, comment replies). */
  replyTo?: { platformPostId: string; rootPlatformPostId?: string };
  /** The platform's `configuration` block (placement and options), already validated. */
  configuration?: Record<string, unknown>;
  /** An earlier call for this post never reported back (it may be live): x reads a duplicate refusal as a cue to look. */
  earlierAttemptOpen?: boolean;
  /**
   * With `earlierAttemptOpen`: when the earliest of those calls began (the database's clock, ms). A look for it
   * searches back to then, however long ago (`withinLookupWindow`); absent, 15 minutes back from the look.
   */
  earlierAttemptSince?: number;
  /** The attempt this call belongs to, as the core keeps it (absent where none is kept: comment replies). */
  attempt?: AttemptHandle;
  /**
   * Aborted once no create of this call may begin any more (its activity's time is nearly up, or it was cancelled;
   * `src/platforms/send-stop.ts`): every adapter checks it right before each create (`beforeCreate`) and ends its
   * waits on it (`pauseUnlessStopped`), so a call that outlived its time limit never sends after the retry looked.
   * Requests already out are not cut: one that began in time ends in time. Absent: no limit (API calls, tests).
   */
  signal?: AbortSignal;
}

/**
 * What an adapter keeps with the attempt (`posts.publish_attempt_handle`, migration 0250), opaque to the core: the
 * adapter records it before a step whose answer may be lost, and the retry of that attempt gets it back, so the
 * adapter can settle the earlier call from what it made rather than by a search (Instagram and Threads: the container
 * about to be published, `src/platforms/graph/containers.ts`).
 */
export interface AttemptHandle {
  /** What an earlier call of this attempt recorded, when that call never reported back; else null. */
  readonly earlier: string | null;
  /** Stores `handle` with the attempt before the step goes out; resolves once it is stored. */
  record(handle: string): Promise<void>;
}

export interface PublishedPost extends PostLink {
  platformPostId: string;
}

/** A published post's link as its publish answer left it. */
export interface PostLink {
  /** Public URL; null where the platform gives none (see publishing-api.md "platform_post_url shapes"). */
  url: string | null;
  /**
   * The link could not be read (its read failed), as opposed to a platform that gave none: a later
   * `GET /api/v1/posts/{id}` asks once more (`resolveUrl`). Absent when the link was read, or is built.
   */
  urlUnread?: boolean;
}

export interface PlatformComment {
  platformCommentId: string;
  platformParentId: string | null;
  author: { handle: string; displayName: string; platformId: string; avatarUrl: string | null };
  text: string;
  createdAt: string;
  likes: number;
  replies: number;
  /** True when the connected account wrote it. */
  own: boolean;
}

export interface CommentPage {
  comments: PlatformComment[];
  nextCursor: string | null;
  /** Comments the platform listed on this page but answered malformed (left out of `comments`; `listedComments`). */
  unreadable?: UnreadableComments;
  /**
   * Tweets the page's replies answer that it did not list, with the platform id each answers in turn (x's
   * `includes.tweets`: a parent past recent search's 7 days): what places a reply on a thread's part when its parent
   * was never stored (`ThreadPartComments.learn`). Not comments to store.
   */
  ancestors?: ReadonlyArray<{ id: string; parentId: string }>;
}

/**
 * `ids`: platform ids of comments left out as malformed; `unidentified`: how many had no usable id. `subtrees`: ids of
 * comments the platform listed without their replies (Bluesky's `blockedPost`/`notFoundPost`, a node past the depth
 * read): the comment and every stored reply under it are still there as far as this read can tell.
 */
export interface UnreadableComments {
  ids: string[];
  unidentified: number;
  subtrees?: string[];
}

/**
 * One read of a post's comments (every page of one refresh, or one look). `thread.rootPlatformPostId`: the post is a
 * part of a thread that starts there (x finds a thread's replies only by its root's conversation); the core sorts what a
 * listing holds by part (`src/comments/thread-part-comments.ts`). `memo`: lives as long as the read; a platform whose
 * whole listing is one answer (bluesky's `getPostThread`, mastodon's `/context`) fetches it once and pages it from there.
 */
/** Ids one `commentParents` call takes at most (X's tweet lookup: 100). */
export const COMMENT_PARENTS_PER_CALL = 100;

export interface CommentRead {
  thread?: { rootPlatformPostId: string };
  memo?: ReadMemo;
}

export interface ReadMemo {
  /** `fetch`'s answer for `key`, asked at most once while the memo lives (a failed fetch is asked again). */
  once<T>(key: string, fetch: () => Promise<T>): Promise<T>;
}

/** Herald's post metric keys (decisions.md "Analytics"); each is an integer, or null where the platform does not report it. */
export const metricKeys = ['impressions', 'reach', 'likes', 'replies', 'reposts', 'quotes', 'bookmarks', 'saves', 'shares', 'clicks', 'video_views'] as const;
export type MetricKey = (typeof metricKeys)[number];
export type PostMetrics = Record<MetricKey, number | null>;

/** What reading one published post's numbers needs besides the account. */
export interface MetricsRequest {
  platformPostId: string;
  /** The post carries a video: platforms that count video views per video report them only then. */
  hasVideo: boolean;
  /** `configuration.placement` of the post (absent: the feed): Instagram answers a story by another metric set, Facebook by none. */
  placement?: string;
  /** Aborted when the caller gives up on the read (its budget spent): the read's calls in flight are ended, not left to run. */
  signal?: AbortSignal;
}

export interface PlatformContext {
  credentials: AccountCredentials;
  /** Settings from AccountIdentity.settings, stored with the account. */
  settings: Record<string, string>;
  /** The stored account it came from (absent at connect time): lets an ended token be renewed and the call retried. */
  account?: {
    id: string;
    credentialExpiresAt: Date | null;
    /** A call refusal recorded for the account, as read with the row: a successful call ends it (`mass-refusal.ts`). */
    credentialRefusedAt?: Date | null;
  };
}

/**
 * How a platform's answer to an ordinary call says the account's credential is refused (README "Credentials",
 * 2026-12-07 night), where no renewal can answer it (`src/accounts/credential-keeping-adapters.ts`). Absent from an
 * adapter: `unauthorizedRefusal` (HTTP 401, and nothing names the account's own end).
 */
export interface CredentialRefusalRule {
  /** The credential refused, as an outage or a refusal of Herald's app could answer too: held first, lost when refused again. */
  refusesCredential(failure: PlatformFailure): boolean;
  /** The platform names the account's own end (revoked by the user, expired, logged out): lost at once, never held nor counted. */
  namesAccountsOwnEnd(failure: PlatformFailure): boolean;
}

export const unauthorizedRefusal: CredentialRefusalRule = {
  refusesCredential: (failure) => failure.detail?.status === 401,
  namesAccountsOwnEnd: () => false,
};

/**
 * Operations a platform may lack are optional; the capability table says which exist so callers never probe.
 * Every method throws only `PlatformFailure` (see below) for platform-caused problems.
 */
export interface PlatformAdapter {
  readonly platform: PlatformSlug;
  verify(ctx: PlatformContext): Promise<AccountIdentity>;
  publish(ctx: PlatformContext, req: PublishRequest): Promise<PublishedPost>;
  /**
   * How long after a create sending the same post again cannot make a second one, because the platform still knows
   * the first (Mastodon keeps an Idempotency-Key an hour, protocols.md section 3): within it a lost call may be
   * repeated, later it would be a new post. Absent: a repeat is never safe (the earlier call is looked for with
   * `findPublished`, or reported unconfirmed). `Infinity` would say for ever. Read only by `sendMarked`.
   */
  readonly repeatedCreatesSafeForMs?: number;
  /** How this platform refuses a credential on a call, as data (`CredentialRefusalRule`); absent: `unauthorizedRefusal`. */
  readonly credentialRefusal?: CredentialRefusalRule;
  /** A create whose outcome was unknown: find the post Herald may already have made (null when surely absent). */
  findPublished?(ctx: PlatformContext, req: PublishRequest): Promise<PublishedPost | null>;
  /** Resolves when the post is gone, including when the platform says it never existed or is already gone. */
  /** `publishedAt` lets platforms with a delete window (telegram: 48 h) refuse with a clear message before calling. */
  delete(ctx: PlatformContext, platformPostId: string, publishedAt?: Date): Promise<void>;
  /** Ask the platform for the post's public URL (threads and instagram give links of their own). */
  resolveUrl?(ctx: PlatformContext, platformPostId: string): Promise<string | null>;
  /** A page of the comments under the post, newest first, within one read (`CommentRead`). */
  listComments?(ctx: PlatformContext, platformPostId: string, cursor?: string, read?: CommentRead): Promise<CommentPage>;
  /**
   * What each of `ids` answers, as links up a reply chain (`CommentPage.ancestors`' shape), read by id whatever the
   * tweet's age (x: `GET /2/tweets?ids=`, at most `COMMENT_PARENTS_PER_CALL` a call); an id the platform no longer
   * has, or that answers nothing, gives no link. Where a thread part's reply hangs when its ancestors are not listed.
   */
  commentParents?(ctx: PlatformContext, ids: readonly string[]): Promise<ReadonlyArray<{ id: string; parentId: string }>>;
  /**
   * `attemptId`: the reply attempt (stable across retries of one Idempotency-Key); a platform that dedupes by a key of
   * the caller's choosing (Bluesky's rkey) derives it from this, so a retry cannot publish a second reply.
   */
  replyToComment?(ctx: PlatformContext, platformPostId: string, platformCommentId: string, text: string, attemptId?: string): Promise<PublishedPost>;
  hideComment?(ctx: PlatformContext, platformCommentId: string, hidden: boolean): Promise<void>;
  /** `platformPostId`: the post the comment is on (LinkedIn's delete path names it; others ignore it). */
  deleteComment?(ctx: PlatformContext, platformCommentId: string, platformPostId?: string): Promise<void>;
  /** The post's own numbers from the platform's metrics endpoint (`<platform>/metrics.ts`); absent where none exists (telegram). */
  readMetrics?(ctx: PlatformContext, req: MetricsRequest): Promise<PostMetrics>;
}

/**
 * The closed taxonomy every platform answer is classified into, once, in each adapter's `errors.ts`.
 * - `permanent`: the platform refused the content or request; retrying the same thing will not help.
 * - `retryable`: a transient fault (5xx, connection reset before the request was sent).
 * - `rate_limited`: with `retryAfterSeconds` read from the platform's own headers or body when it names one.
 * - `reauthorize`: the credential is no longer accepted; the account needs reconnecting.
 * - `gone`: the object does not exist (or no longer does).
 * - `unknown_outcome`: the request may or may not have taken effect (timeout, connection cut after sending).
 */
export type PlatformFailureKind = 'permanent' | 'retryable' | 'rate_limited' | 'reauthorize' | 'gone' | 'unknown_outcome';

export class PlatformFailure extends Error {
  constructor(
    readonly platform: PlatformSlug,
    readonly kind: PlatformFailureKind,
    /** A short sentence naming the platform, safe to show a client. Never the raw platform body. */
    readonly clientMessage: string,
    readonly retryAfterSeconds?: number,
    /** For logs only: status and a truncated body. Never returned to clients. */
    readonly detail?: { status?: number; body?: string },
  ) {
    super(clientMessage);
    this.name = 'PlatformFailure';
  }

  /**
   * A `retryable` answer to a create that may have made the post all the same (a server error; `classifyCreateFailure`
   * in transport.ts): its attempt stays open, so the retry looks first or reports it unconfirmed (`sendMarked`).
   */
  mayHaveTakenEffect = false;
}

export function isPlatformFailure(err: unknown): err is PlatformFailure {
  return err instanceof PlatformFailure;
}
