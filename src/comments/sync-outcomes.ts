import type { Db } from '../db';
import type { PostRow } from '../db/tables/posts';
import type { Logger } from '../logger';
import { platformName } from '../platforms/availability';
import type { PlatformFailure } from '../platforms/types';
import { markAccountRefused } from './actions-failure';
import type { SyncOutcomeWrite } from './sync-state';
import { backoffMs, windowMs } from './sync-windows';

/**
 * How a refresh that did not end complete is reported in its post's sync state (`meta.sync`): the status, the sentence,
 * and when the next may run. `sync.ts` runs the refresh and calls these with its one writer of the state.
 */

/** Writes the refresh's outcome; the failure count defaults to the one before the refresh. */
export type RecordOutcome = (outcome: Omit<SyncOutcomeWrite, 'consecutiveFailures'> & { consecutiveFailures?: number }) => Promise<void>;

type OutcomePost = Pick<PostRow, 'id' | 'platform' | 'account_id'>;

/**
 * A read stopped part-way (at the page limit, or when Temporal gave up on it: its time budget) stored what it read, but
 * `ok` ("snapshot is current") would tell a client it holds every comment: it is `error` ("snapshot returned as it
 * stands") with a reason saying why it stopped part-way, as an x read the allowance stopped is `budget` with such a
 * reason, and the next waits the failure backoff (the next read of so many comments would stop there again). Nothing
 * is inferred deleted from it (README, 2026-12-07, fix-comment-sync-two). One whose time ran out before its first page
 * read nothing: the snapshot stays as of the last sync.
 */
export async function recordTruncated(
  post: OutcomePost,
  read: { pages: number; by: 'pages' | 'time' },
  failuresBefore: number,
  now: Date,
  record: RecordOutcome,
): Promise<void> {
  const failures = failuresBefore + 1;
  const nextSyncAfter = new Date(now.getTime() + backoffMs(post.platform, failures, null));
  const name = platformName(post.platform);
  const next = `Next refresh after ${nextSyncAfter.toISOString()}.`;
  if (read.pages === 0) {
    const reason = `The last comment refresh ran out of time before reading any ${name} comments; the comments shown are from the last sync. ${next}`;
    return record({ status: 'error', reason, nextSyncAfter, consecutiveFailures: failures });
  }
  const pages = `${read.pages.toLocaleString('en-US')} ${read.pages === 1 ? 'page' : 'pages'} of ${name} comments`;
  const where = read.by === 'time' ? `when its time ran out, after ${pages}` : `after ${pages}`;
  const reason = `The last comment refresh stopped part-way, ${where}; the comments shown may be incomplete. ${next}`;
  return record({ status: 'error', reason, syncedAt: now, nextSyncAfter, consecutiveFailures: failures });
}

/** `postingWorks`: the account is still active (a withheld comment permission leaves posting alone unless it was switched off). */
export function reconnectSentence(name: string, postingWorks = true): string {
  return `The ${name} connection needs re-authorizing before Herald can read its comments; reconnect the account from the dashboard.${postingWorks ? ' Posting keeps working.' : ''}`;
}

/** A refresh the platform refused or that failed: the sync state the contract's rules 3 and 5 give it. */
export async function recordFailure(
  deps: { db: Db; logger: Logger },
  post: OutcomePost,
  failure: PlatformFailure,
  failuresBefore: number,
  now: Date,
  record: RecordOutcome,
): Promise<void> {
  const name = platformName(post.platform);
  deps.logger.warn({ postId: post.id, platform: post.platform, kind: failure.kind, detail: failure.detail }, 'comment refresh failed');
  if (failure.kind === 'reauthorize') {
    // A withheld comment permission shows on the account too (`reauthorization_required`; it keeps posting).
    if (post.account_id) await markAccountRefused({ db: deps.db }, post.account_id, failure);
    return record({ status: 'permission', reason: reconnectSentence(name), nextSyncAfter: new Date(now.getTime() + windowMs(post.platform, 'auto')) });
  }
  const failures = failuresBefore + 1;
  const retryAfter = failure.kind === 'rate_limited' ? (failure.retryAfterSeconds ?? null) : null;
  const nextSyncAfter = new Date(now.getTime() + backoffMs(post.platform, failures, retryAfter));
  const shown = 'the comments shown are from the last sync';
  if (failure.kind === 'rate_limited') {
    return record({ status: 'rate_limited', reason: `${name} is rate limiting comment reads; ${shown}. Next refresh after ${nextSyncAfter.toISOString()}.`, nextSyncAfter, consecutiveFailures: failures });
  }
  const why = failure.kind === 'gone' ? `the post is no longer on ${name}` : failure.clientMessage.replace(/\.$/, '');
  return record({ status: 'error', reason: `The last comment refresh failed (${why}); ${shown}. Next refresh after ${nextSyncAfter.toISOString()}.`, nextSyncAfter, consecutiveFailures: failures });
}
