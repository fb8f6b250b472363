import { randomUUID } from 'node:crypto';
import { platformContextOf } from '../accounts/credentials';
import type { Db } from '../db';
import type { AccountRow } from '../db/tables/accounts';
import type { PostRow } from '../db/tables/posts';
import type { Logger } from '../logger';
import { commentCapabilitiesFor } from '../platforms/comment-capabilities';
import { platformName } from '../platforms/availability';
import type { PlatformAdapters } from '../platforms/registry';
import { ListingMemo } from '../platforms/listed-comments';
import { isPlatformFailure, PlatformFailure, type CommentRead, type PlatformContext } from '../platforms/types';
import type { SealedBox } from '../crypto/sealed-box';
import { loadLimits } from '../quota/quota';
import {
  countsXReads,
  giveBackCommentSync,
  giveBackXCommentReads,
  planRefusal,
  syncBudgetReason,
  takeCommentSync,
  takeXCommentReads,
  xReadsBudgetReason,
  type AllowanceLimits,
} from './allowance';
import { markCommentsDeleted } from './repository';
import { findUnseenComments, markCommentsSeen, markSubtreesSeen, toRefreshed, upsertRefreshedComments } from './sync-repository';
import { reportReceivedComments } from './received-events';
import { settleThreadPart, threadPartRead } from './sync-thread-part';
import { recordFailure, recordTruncated, reconnectSentence, type RecordOutcome } from './sync-outcomes';
import { claimRefresh, loadSyncState, recordSyncOutcome, releaseRefreshClaim, renewRefreshClaim } from './sync-state';
import { dueAt, isDue, READ_RECENTLY_MS, readRecently, windowMs, type RefreshMode } from './sync-windows';

/**
 * One refresh of one post's stored comments (decisions.md "Comments"): the checks before anything is spent (account
 * connected, plan, sync allowance), the platform pages (each x page taking its replies from the x read allowance
 * first), the upserts, after a complete read the platform-side deletions, and the one `comment.received` event. Its
 * outcome is written to the post's sync state, which is what listings report. Called only by the post's sync workflow
 * (one refresh at a time).
 */

export interface CommentSyncDeps {
  db: Db;
  logger: Logger;
  adapters: PlatformAdapters;
  sealedBox: SealedBox;
}

/**
 * `onPage`: called before each platform page (the activity heartbeats there, and throws once Temporal gave up on it).
 * `maxPages`: the page limit (`MAX_PAGES`; tests lower it).
 */
interface RefreshHooks {
  onPage?: () => void;
  maxPages?: number;
}

/** The refresh's claim on its post ran out and another refresh took it: this one stops and leaves the outcome to that one. */
class RefreshClaimLost extends Error {}

/**
 * `onPage` threw: Temporal gave up on the activity (its time budget, start-to-close or heartbeat, ran out). The read
 * stops there, part-way, and is reported as such (`recordTruncated`), not as an answer Herald could not process.
 */
class RefreshTimeUp extends Error {}

/** `stop`: the post cannot have comments read (gone, unpublished, platform without a read): the workflow ends. */
export type RefreshResult = { kind: 'stop' } | { kind: 'checked'; ran: boolean; nextBackgroundAt: number | null };

/** A platform listing may lag a write the service just made; such a comment is not taken for deleted before this. */
const OWN_COMMENT_GRACE_MS = 10 * 60_000;
/** How far back a platform's comment listing reaches (X recent search: 7 days); older comments are never inferred deleted. */
const LISTING_HORIZON_DAYS: Partial<Record<PostRow['platform'], number>> = { x: 7 };
/** A safety stop for runaway paging (100,000 comments at 100 a page). */
const MAX_PAGES = 1_000;
const X_PAGE_SIZE = 100;

export async function refreshIfDue(deps: CommentSyncDeps, input: { postId: string; mode: RefreshMode; now: number }, hooks: RefreshHooks = {}): Promise<RefreshResult> {
  const now = new Date(input.now);
  const row = await deps.db
    .selectFrom('posts')
    .leftJoin('accounts', 'accounts.id', 'posts.account_id')
    .selectAll('posts')
    .select('accounts.kind as account_kind')
    .where('posts.id', '=', input.postId)
    .executeTakeFirst();
  if (!row || row.status !== 'published' || !row.platform_post_id) return { kind: 'stop' };
  if (!commentCapabilitiesFor(row.platform, { kind: row.account_kind }).list || !deps.adapters[row.platform].listComments) return { kind: 'stop' };

  let state = await loadSyncState(deps.db, row.id);
  if (input.mode === 'background' && !readRecently(state?.last_listed_at ?? null, now)) return { kind: 'checked', ran: false, nextBackgroundAt: null };
  if (!isDue(row.platform, state, input.mode, now)) return { kind: 'checked', ran: false, nextBackgroundAt: nextBackgroundAt(row.platform, state, now) };

  // One refresh of a post at a time: one Temporal gave up on (past its timeout) may still be running, and the next
  // used to start beside it, both spending a sync and racing their outcomes (README, 2026-12-07). The state is read
  // again under the claim: a refresh that ended meanwhile may have made this one not due.
  const claim = randomUUID();
  if (!(await claimRefresh(deps.db, row.id, claim))) return { kind: 'checked', ran: false, nextBackgroundAt: nextBackgroundAt(row.platform, state, now) };
  try {
    state = await loadSyncState(deps.db, row.id);
    if (!isDue(row.platform, state, input.mode, now)) return { kind: 'checked', ran: false, nextBackgroundAt: nextBackgroundAt(row.platform, state, now) };
    const onPage = async () => {
      if (!(await renewRefreshClaim(deps.db, row.id, claim))) throw new RefreshClaimLost();
      try {
        hooks.onPage?.();
      } catch (err) {
        throw new RefreshTimeUp('the comment refresh was given up on', { cause: err });
      }
    };
    await runRefresh(deps, { ...row, platform_post_id: row.platform_post_id }, state?.consecutive_failures ?? 0, now, { onPage, maxPages: hooks.maxPages ?? MAX_PAGES });
  } finally {
    await releaseRefreshClaim(deps.db, row.id, claim);
  }
  // Whatever the refresh's outcome, one event for what it stored; also what an earlier refresh stored and died before reporting.
  await reportReceivedComments(deps.db, row);
  return { kind: 'checked', ran: true, nextBackgroundAt: nextBackgroundAt(row.platform, await loadSyncState(deps.db, row.id), now) };
}

/** When the workflow refreshes next on its own: the `auto` window after the last one, if someone still reads the post then. */
function nextBackgroundAt(platform: PostRow['platform'], state: Awaited<ReturnType<typeof loadSyncState>>, now: Date): number | null {
  if (!state || !readRecently(state.last_listed_at, now)) return null;
  const at = Math.max(dueAt(platform, state, 'background') ?? now.getTime(), now.getTime());
  return at - state.last_listed_at!.getTime() < READ_RECENTLY_MS ? at : null;
}

type RefreshPost = PostRow & { platform_post_id: string };

interface PageHooks {
  onPage: () => Promise<void>;
  maxPages: number;
}

async function runRefresh(deps: CommentSyncDeps, post: RefreshPost, failuresBefore: number, now: Date, pages: PageHooks): Promise<void> {
  const name = platformName(post.platform);
  const record: RecordOutcome = (outcome) => recordSyncOutcome(deps.db, post.id, { consecutiveFailures: failuresBefore, ...outcome }, now);
  // Refusals that never reach the platform are checked again after the short window.
  const recheckAt = new Date(now.getTime() + windowMs(post.platform, 'true'));

  const account = post.account_id ? await deps.db.selectFrom('accounts').selectAll().where('id', '=', post.account_id).executeTakeFirst() : undefined;
  const ctx = account ? platformContextOf(deps.sealedBox, account) : null;
  if (!account || !ctx || account.inactive_reason === 'disconnected') {
    return record({ status: 'permission', reason: `The ${name} account of this post was disconnected; reconnect it from the dashboard to read its comments again.`, nextSyncAfter: recheckAt });
  }
  if (account.inactive_reason === 'connection_lost') {
    return record({ status: 'permission', reason: `${name} no longer accepts this account's connection; reconnect the account from the dashboard to read its comments again.`, nextSyncAfter: recheckAt });
  }
  if (account.inactive_reason === 'reauthorization_required') {
    return record({ status: 'permission', reason: reconnectSentence(name, account.active), nextSyncAfter: recheckAt });
  }
  const limits = await loadLimits(deps.db, post.user_id);
  const planReason = planRefusal(post.platform, account.own_credentials, limits);
  if (planReason) return record({ status: 'plan', reason: planReason, nextSyncAfter: recheckAt });
  if (!(await takeCommentSync(deps.db, post.user_id, limits.commentSyncsPerMonth, now))) {
    return record({ status: 'budget', reason: syncBudgetReason(limits, now), nextSyncAfter: recheckAt });
  }

  // Once the sync is taken, every way the refresh ends is recorded below and gives the sync back if nothing was
  // read. Anything that throws and is not a platform answer (a database refusal, an adapter bug) is a failed refresh
  // too: it used to leave no sync state and the sync spent, and the workflow tried again every minute, spending one
  // each time while `meta.sync` still said `ok` (README "Comment listing and sync", 2026-12-07).
  const progress = { stored: 0 };
  let read: ReadOutcome;
  try {
    read = await readAllPages(deps, post, account, ctx, limits, now, progress, pages);
    if (read.outcome === 'complete' && read.conclusive) await recordPlatformDeletions(deps, post, now);
  } catch (err) {
    if (err instanceof RefreshClaimLost) throw err;
    deps.logger.error({ err, postId: post.id, platform: post.platform }, 'comment refresh failed outside the platform call');
    read = { outcome: 'failed', failure: new PlatformFailure(post.platform, 'retryable', `Herald could not process what ${name} answered`) };
  }
  const stored = progress.stored;
  const readNothing = read.outcome === 'failed' || read.outcome === 'x_reads_spent' || (read.outcome === 'truncated' && read.pages === 0);
  if (stored === 0 && readNothing) await giveBackCommentSync(deps.db, post.user_id, now);
  if (read.outcome === 'complete') {
    return record({ status: 'ok', reason: null, syncedAt: now, nextSyncAfter: recheckAt, consecutiveFailures: 0 });
  }
  if (read.outcome === 'truncated') return recordTruncated(post, read, failuresBefore, now, record);
  if (read.outcome === 'x_reads_spent') {
    return record({
      status: 'budget',
      reason: xReadsBudgetReason(limits, now, stored > 0),
      ...(stored > 0 ? { syncedAt: now } : {}),
      nextSyncAfter: recheckAt,
      consecutiveFailures: 0,
    });
  }
  return recordFailure(deps, post, read.failure, failuresBefore, now, record);
}

/** After a complete read: what it did not see is gone from the platform (README "Deletions" names the exceptions). */
async function recordPlatformDeletions(deps: CommentSyncDeps, post: RefreshPost, now: Date): Promise<void> {
  const horizonDays = LISTING_HORIZON_DAYS[post.platform];
  const gone = await findUnseenComments(deps.db, post.id, now, {
    ownGraceMs: OWN_COMMENT_GRACE_MS,
    createdAfter: horizonDays === undefined ? null : new Date(now.getTime() - horizonDays * 86_400_000),
  });
  await markCommentsDeleted(deps.db, post.id, post.platform, gone);
}

/** How a read ended; what it stored so far is counted in the caller's `progress` (it outlives a throw). */
type ReadOutcome =
  /** `conclusive`: every comment listed was identified, so one stored and not seen is gone. */
  | { outcome: 'complete'; conclusive: boolean }
  /**
   * Stopped part-way, at the page limit (`by: 'pages'`) or when its time ran out (`by: 'time'`, after `pages` pages):
   * what was read is stored, but nothing can be concluded about comments not reached.
   */
  | { outcome: 'truncated'; pages: number; by: 'pages' | 'time' }
  | { outcome: 'x_reads_spent' }
  | { outcome: 'failed'; failure: PlatformFailure };

/** `progress.stored` counts what was stored so far (the caller reads it after a return or a throw). */
async function readAllPages(
  deps: CommentSyncDeps,
  post: RefreshPost,
  account: AccountRow,
  ctx: PlatformContext,
  limits: AllowanceLimits,
  now: Date,
  progress: { stored: number },
  { onPage, maxPages }: PageHooks,
): Promise<ReadOutcome> {
  const listComments = deps.adapters[post.platform].listComments!;
  const metered = countsXReads(post.platform, account.own_credentials);
  const thread = await threadPartRead(deps.db, post);
  const read: CommentRead = { thread: thread?.listing, memo: new ListingMemo() };
  let conclusive = true;
  let cursor: string | undefined;
  for (let page = 0; page < maxPages; page += 1) {
    try {
      await onPage();
    } catch (err) {
      if (!(err instanceof RefreshTimeUp)) throw err;
      deps.logger.warn({ postId: post.id, pages: page }, 'comment refresh stopped: its time ran out');
      return { outcome: 'truncated', pages: page, by: 'time' };
    }
    const granted = metered ? await takeXCommentReads(deps.db, post.user_id, limits.xCommentReadsPerMonth, X_PAGE_SIZE, now) : Infinity;
    if (granted === 0) return { outcome: 'x_reads_spent' };
    let result;
    try {
      result = await listComments(ctx, post.platform_post_id, cursor, read);
    } catch (err) {
      if (metered) await giveBackXCommentReads(deps.db, post.user_id, granted, now);
      if (isPlatformFailure(err)) return { outcome: 'failed', failure: err };
      throw err;
    }
    // Sync rule 8: one read per reply x returned; what the allowance does not cover is not stored.
    const kept = result.comments.slice(0, granted);
    if (metered) await giveBackXCommentReads(deps.db, post.user_id, granted - kept.length, now);
    thread?.comments.learn(result.ancestors ?? []);
    await upsertRefreshedComments(deps.db, post, (thread ? thread.comments.take(kept) : kept).map(toRefreshed), now);
    progress.stored += kept.length;
    // A comment listed malformed is still there: a stored one is seen; one without an id leaves every stored one in doubt.
    await markCommentsSeen(deps.db, post.id, result.unreadable?.ids ?? [], now);
    await markSubtreesSeen(deps.db, post.id, result.unreadable?.subtrees ?? [], now);
    if ((result.unreadable?.unidentified ?? 0) > 0) conclusive = false;
    if (kept.length < result.comments.length) return { outcome: 'x_reads_spent' };
    if (!result.nextCursor) {
      if (thread) await settleThreadPart(deps, post, ctx, thread, now, () => callAllowed(onPage, deps, post));
      return { outcome: 'complete', conclusive };
    }
    cursor = result.nextCursor;
  }
  deps.logger.warn({ postId: post.id, pages: maxPages }, 'comment refresh stopped at the page limit');
  return { outcome: 'truncated', pages: maxPages, by: 'pages' };
}

/** `onPage` before a call past the pages (the thread part's lookups): false once the refresh's time ran out. */
async function callAllowed(onPage: () => Promise<void>, deps: CommentSyncDeps, post: RefreshPost): Promise<boolean> {
  try {
    await onPage();
    return true;
  } catch (err) {
    if (!(err instanceof RefreshTimeUp)) throw err;
    deps.logger.warn({ postId: post.id }, 'comment refresh: its time ran out before the thread part\'s lookups');
    return false;
  }
}
