import { randomUUID } from 'node:crypto';
import { AccountNotConnectedError, loadPlatformContext } from '../accounts/platform-context';
import type { SealedBox } from '../crypto/sealed-box';
import type { Db } from '../db';
import type { PostAnalyticsRow } from '../db/tables/analytics';
import type { PostRow } from '../db/tables/posts';
import type { Logger } from '../logger';
import { platformName } from '../platforms/availability';
import type { PlatformAdapters } from '../platforms/registry';
import { isPlatformFailure, PlatformFailure, type MetricsRequest, type PlatformContext, type PlatformSlug, type PostMetrics } from '../platforms/types';
import { findOwnLivePost } from '../posts/read';
import { natureFromUrl } from '../posts/rules/media-formats';
import { placementOf } from '../posts/rules/placement';
import { claimRefresh, findSnapshot, recordFailedRead, releaseClaim, storeLateSnapshot, storeSnapshot } from './repository';

/**
 * `GET /api/v1/analytics/posts/:id` (decisions.md "Analytics"): the stored snapshot answers; the platform is read
 * when there is none yet or on `refresh=true`, at most once per post in any 5 minutes (a failed read counts), and by
 * one request at a time across every API process (the claim in `repository.ts`). The read is synchronous, on the
 * request path: it is one bounded GET (two to five on Facebook and LinkedIn) through the adapter's HTTP client and
 * timeouts, all of them within one budget (`READ_BUDGET_MS`), nothing to resume after a crash, so no workflow.
 * Analytics spend no quota and never change the account's state.
 */

/** The floor between two platform reads of one post. */
const REFRESH_FLOOR_MS = 5 * 60_000;
/** A claim older than this belongs to a request that died (a live one ends its claim within `READ_BUDGET_MS`). */
const CLAIM_ABANDONED_AFTER_MS = 2 * 60_000;
/**
 * The whole platform read, every call of it, from the claim: a call may take 30 s (the HTTP client's timeout) and a
 * read makes up to five in a row (Facebook two, Instagram's too-few-viewers fallback two, Bluesky read, refresh, read,
 * login, read), so without a budget a read could last minutes and a request waiting for it could not know when to
 * stop. A read over it is a failed read (`unknown_outcome`: it may have reached the platform, so it sets the floor).
 */
const READ_BUDGET_MS = 20_000;
/**
 * How often a request waiting for another's first read looks again, and for how long at most: the read's budget and
 * time to store its answer and be seen, so a waiter gives up only on a read that has stopped (its process died or
 * its database write is stuck), never on one that can still succeed. 25 s stays inside common proxy limits.
 */
const WAIT_POLL_MS = 100;
const WAIT_LIMIT_MS = READ_BUDGET_MS + 5_000;
/** Retry-After of that answer: the read in flight may end any moment; asking again soon costs no platform call. */
const IN_FLIGHT_RETRY_AFTER_SECONDS = 10;

interface AnalyticsDeps {
  db: Db;
  adapters: PlatformAdapters;
  sealedBox: SealedBox;
  logger: Logger;
  now(): Date;
  sleep?(ms: number): Promise<void>;
}

interface PostAnalytics {
  post_id: string;
  platform: PlatformSlug;
  platform_post_id: string;
  metrics: PostMetrics;
  synced_at: string;
  next_refresh_after: string;
}

export type AnalyticsResult =
  | { kind: 'ok'; analytics: PostAnalytics }
  | { kind: 'not_published'; status: PostRow['status'] }
  | { kind: 'no_platform_analytics'; platform: PlatformSlug }
  | { kind: 'account_disconnected'; platform: PlatformSlug }
  /**
   * No platform read now: one is in flight (`in_flight`), the last one succeeded (`recent_read`) or failed
   * (`failed_read`) inside the floor, which runs until `retryAfterSeconds` from now.
   */
  | { kind: 'refresh_too_soon'; retryAfterSeconds: number; reason: 'in_flight' | 'recent_read' | 'failed_read' }
  | { kind: 'platform_failed'; failure: PlatformFailure }
  /** The platform read another request made while this one waited failed (its reason went to that request). */
  | { kind: 'concurrent_read_failed'; platform: PlatformSlug }
  /** The first read this request waited for had not ended within `WAIT_LIMIT_MS`. */
  | { kind: 'read_still_in_flight'; platform: PlatformSlug; retryAfterSeconds: number };

export async function getPostAnalytics(deps: AnalyticsDeps, userId: string, postId: string, options: { refresh: boolean }): Promise<AnalyticsResult> {
  const post = await findOwnLivePost(deps.db, userId, postId);
  if (post.status !== 'published' || !post.platform_post_id) return { kind: 'not_published', status: post.status };
  if (!deps.adapters[post.platform].readMetrics) return { kind: 'no_platform_analytics', platform: post.platform };
  const published = { ...post, platform_post_id: post.platform_post_id };
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const waitUntil = Date.now() + WAIT_LIMIT_MS;
  let sawOtherRead = false;
  for (;;) {
    const snapshot = await findSnapshot(deps.db, post.id);
    if (hasMetrics(snapshot) && !options.refresh) return { kind: 'ok', analytics: viewOf(published, snapshot) };
    const now = deps.now();
    const abandonedBefore = new Date(now.getTime() - CLAIM_ABANDONED_AFTER_MS);
    const claimedAt = snapshot?.refresh_claimed_at ?? null;
    if (claimedAt && claimedAt >= abandonedBefore) {
      // Another request is reading the platform: a refresh is too soon; a first read's answer is this request's too.
      if (options.refresh) return tooSoon(snapshot, now);
      if (Date.now() > waitUntil) return { kind: 'read_still_in_flight', platform: post.platform, retryAfterSeconds: IN_FLIGHT_RETRY_AFTER_SECONDS };
      sawOtherRead = true;
      await sleep(WAIT_POLL_MS);
      continue;
    }
    // The read this request waited for failed: its failure is this request's too, not a reason to read again.
    if (sawOtherRead && !claimedAt) return { kind: 'concurrent_read_failed', platform: post.platform };
    // Inside the floor: a refresh is too soon; a plain GET reaching here has no snapshot to answer, so the last read
    // failed, and a failed read counts as a read (429 with the time left, no platform call).
    if (snapshot?.next_refresh_after && snapshot.next_refresh_after > now) return tooSoon(snapshot, now);
    const claimId = randomUUID();
    const readBy = Date.now() + READ_BUDGET_MS;
    if (await claimRefresh(deps.db, post.id, claimId, now, abandonedBefore)) return readPlatform(deps, published, claimId, readBy);
    // Lost the claim to a concurrent request, or the floor has not passed.
    if (options.refresh) return tooSoon(await findSnapshot(deps.db, post.id), deps.now());
    sawOtherRead = true;
  }
}

type PublishedPost = PostRow & { platform_post_id: string };

async function readPlatform(deps: AnalyticsDeps, post: PublishedPost, claimId: string, readBy: number): Promise<AnalyticsResult> {
  let ctx: PlatformContext;
  let request: MetricsRequest;
  try {
    if (!post.account_id) throw new AccountNotConnectedError('', 'not_found');
    ({ ctx } = await loadPlatformContext(deps.db, deps.sealedBox, post.account_id));
    request = { platformPostId: post.platform_post_id, hasVideo: await hasVideo(deps.db, post), placement: placementOf(post.platform, post.configuration) ?? undefined };
  } catch (err) {
    // Nothing reached the platform: no floor.
    await releaseClaim(deps.db, post.id, claimId);
    if (err instanceof AccountNotConnectedError) return { kind: 'account_disconnected', platform: post.platform };
    throw err;
  }
  let metrics: PostMetrics;
  // Set once the failure is recorded: a read answering after its budget keeps its numbers if nothing moved since.
  let keepLate: ((late: PostMetrics) => Promise<void>) | undefined;
  let lateAnswer: PostMetrics | undefined;
  const late = (answered: PostMetrics) => {
    lateAnswer = answered;
    void keepLate?.(answered);
  };
  try {
    metrics = await withinBudget(post.platform, (signal) => deps.adapters[post.platform].readMetrics!(ctx, { ...request, signal }), readBy, late);
  } catch (err) {
    const failedAt = deps.now();
    const floor = new Date(failedAt.getTime() + failureFloorMs(err));
    await recordFailedRead(deps.db, post.id, claimId, floor);
    keepLate = async (answered) => {
      try {
        if (await storeLateSnapshot(deps.db, post.id, floor, { metrics: answered, syncedAt: deps.now() })) {
          deps.logger.info({ post_id: post.id, platform: post.platform }, 'analytics: a read given up on at its budget answered later; its numbers are kept');
        }
      } catch (storeErr) {
        deps.logger.warn({ err: storeErr, post_id: post.id }, 'analytics: could not keep a late read');
      }
    };
    if (lateAnswer) void keepLate(lateAnswer); // it answered while the failure was being recorded
    if (!isPlatformFailure(err)) throw err;
    deps.logger.warn({ post_id: post.id, platform: err.platform, kind: err.kind, detail: err.detail }, 'analytics: platform read failed');
    return { kind: 'platform_failed', failure: err };
  }
  const syncedAt = deps.now();
  const stored = await storeSnapshot(deps.db, post.id, claimId, { metrics, syncedAt, nextRefreshAfter: new Date(syncedAt.getTime() + REFRESH_FLOOR_MS) });
  // Taken over as abandoned while this read was slow: the newer claim's snapshot is the one kept.
  const snapshot = stored ?? (await findSnapshot(deps.db, post.id));
  if (hasMetrics(snapshot)) return { kind: 'ok', analytics: viewOf(post, snapshot) };
  return { kind: 'ok', analytics: viewOf(post, { metrics, synced_at: syncedAt, next_refresh_after: new Date(syncedAt.getTime() + REFRESH_FLOOR_MS) }) };
}

/**
 * The read's answer, or a failure once `readBy` (epoch ms) passes. A read given up on has its calls in flight aborted
 * (their connections closed, so they hold no socket and the platform stops serving them) and makes no further call;
 * should it still answer (a step that ignores the signal, an answer already parsed), `late` gets it: the request has
 * been answered, but the numbers are worth keeping (`storeLateSnapshot`).
 */
async function withinBudget(
  platform: PlatformSlug,
  read: (signal: AbortSignal) => Promise<PostMetrics>,
  readBy: number,
  late: (metrics: PostMetrics) => void,
): Promise<PostMetrics> {
  const givenUp = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const overBudget = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new PlatformFailure(platform, 'unknown_outcome', `${platformName(platform)} did not answer in time.`, undefined, { body: `analytics read over its ${READ_BUDGET_MS} ms budget` }));
      givenUp.abort();
    }, Math.max(0, readBy - Date.now()));
  });
  try {
    const reading = read(givenUp.signal);
    // A read given up on fails once aborted, with nobody awaiting it; one that answers anyway is passed on.
    reading.then((metrics) => givenUp.signal.aborted && late(metrics), () => undefined);
    return await Promise.race([reading, overBudget]);
  } finally {
    clearTimeout(timer);
  }
}

type Snapshot = Pick<PostAnalyticsRow, 'metrics' | 'synced_at' | 'next_refresh_after'>;
type CompleteSnapshot = { metrics: PostMetrics; synced_at: Date; next_refresh_after: Date };

function hasMetrics(row: Snapshot | undefined): row is Snapshot & CompleteSnapshot {
  return !!row && row.metrics !== null && row.synced_at !== null && row.next_refresh_after !== null;
}

function viewOf(post: PublishedPost, snapshot: CompleteSnapshot): PostAnalytics {
  return {
    post_id: post.id,
    platform: post.platform,
    platform_post_id: post.platform_post_id,
    metrics: snapshot.metrics,
    synced_at: snapshot.synced_at.toISOString(),
    next_refresh_after: snapshot.next_refresh_after.toISOString(),
  };
}

/** The floor a failed read sets: 5 minutes, or the platform's own wait when a rate limit names a longer one. */
function failureFloorMs(err: unknown): number {
  const platformWait = isPlatformFailure(err) && err.kind === 'rate_limited' ? (err.retryAfterSeconds ?? 0) * 1000 : 0;
  return Math.max(REFRESH_FLOOR_MS, platformWait);
}

/**
 * Why no platform read now, and for how long: until `next_refresh_after`; a read in flight with no floor yet sets one a
 * full floor from now. At least 1 second. A floor later than a full floor after `synced_at` was set by a failed read
 * (a read is claimed only once the floor has passed, so a failure's floor always lands later than that).
 */
function tooSoon(row: PostAnalyticsRow | undefined, now: Date): AnalyticsResult {
  const inFlight = !!row?.refresh_claim_id || !row?.next_refresh_after;
  const next = inFlight || !row?.next_refresh_after ? now.getTime() + REFRESH_FLOOR_MS : row.next_refresh_after.getTime();
  const retryAfterSeconds = Math.max(1, Math.ceil((next - now.getTime()) / 1000));
  if (inFlight) return { kind: 'refresh_too_soon', retryAfterSeconds, reason: 'in_flight' };
  const failed = !hasMetrics(row) || next > row.synced_at.getTime() + REFRESH_FLOOR_MS;
  return { kind: 'refresh_too_soon', retryAfterSeconds, reason: failed ? 'failed_read' : 'recent_read' };
}


/** Uploads are known by their media row; URLs by their extension (downloaded copies are removed after publishing). */
async function hasVideo(db: Db, post: PostRow): Promise<boolean> {
  const refs = post.media ?? [];
  if (refs.some((ref) => ref.url && natureFromUrl(ref.url)?.kind === 'video')) return true;
  const ids = refs.map((ref) => ref.media_id).filter((id): id is string => typeof id === 'string');
  if (ids.length === 0) return false;
  const video = await db.selectFrom('media').select('id').where('id', 'in', ids).where('kind', '=', 'video').executeTakeFirst();
  return video !== undefined;
}
