import { sql } from 'kysely';
import type { Db } from '../db';
import type { CommentSyncStateRow, CommentSyncStatus } from '../db/tables/comments';

/**
 * The `comment_sync_states` rows (migration 0060): what `meta.sync` reports, written only by the sync activity
 * (outcomes) and the listing (`last_listed_at`).
 */

export async function loadSyncState(db: Db, postId: string): Promise<CommentSyncStateRow | undefined> {
  return db.selectFrom('comment_sync_states').selectAll().where('post_id', '=', postId).executeTakeFirst();
}

/** `last_listed_at` is rewritten at most once a minute: a busy listing costs no write per page, and the 30-minute
 * "being read" rule needs no finer. */
const LISTED_PRECISION_MS = 60_000;

export function listedLongAgo(lastListedAt: Date | null, now: Date): boolean {
  return lastListedAt === null || now.getTime() - lastListedAt.getTime() >= LISTED_PRECISION_MS;
}

/** The post was listed at `now` (conditional, so concurrent listings of one post write once). */
export async function touchListed(db: Db, postId: string, now: Date): Promise<void> {
  await db
    .insertInto('comment_sync_states')
    .values({ post_id: postId, last_listed_at: now })
    .onConflict((oc) =>
      oc
        .column('post_id')
        .doUpdateSet({ last_listed_at: now })
        .where(sql<boolean>`comment_sync_states.last_listed_at is null or comment_sync_states.last_listed_at < ${new Date(now.getTime() - LISTED_PRECISION_MS)}`),
    )
    .execute();
}

export interface SyncOutcomeWrite {
  status: CommentSyncStatus;
  reason: string | null;
  /** Set when comments were read (fully or in part). */
  syncedAt?: Date;
  nextSyncAfter: Date;
  consecutiveFailures: number;
}

/**
 * Records one refresh's outcome. Only the post's sync workflow calls it, one refresh at a time, so the failure count
 * it read before the refresh is still the stored one.
 */
export async function recordSyncOutcome(db: Db, postId: string, outcome: SyncOutcomeWrite, now: Date): Promise<void> {
  const values = {
    status: outcome.status,
    reason: outcome.reason,
    next_sync_after: outcome.nextSyncAfter,
    consecutive_failures: outcome.consecutiveFailures,
    updated_at: now,
    ...(outcome.syncedAt ? { synced_at: outcome.syncedAt } : {}),
  };
  await db
    .insertInto('comment_sync_states')
    .values({ post_id: postId, ...values })
    .onConflict((oc) => oc.column('post_id').doUpdateSet(values))
    .execute();
}

/**
 * One refresh of a post at a time (migration 0264). A claim holds this long unless renewed; the refresh renews it before
 * every page, so only a refresh that stopped renewing (its worker died) loses it. The database's clock decides, since
 * workflow time may be skipped.
 */
const REFRESH_CLAIM_MS = 5 * 60_000;
const claimedUntil = sql<Date>`now() + ${`${REFRESH_CLAIM_MS} milliseconds`}::interval`;

/** The refresh `claim` claims the post unless another holds an unexpired claim; true when it did. */
export async function claimRefresh(db: Db, postId: string, claim: string): Promise<boolean> {
  const row = await db
    .insertInto('comment_sync_states')
    .values({ post_id: postId, refresh_claim: claim, refresh_claimed_until: claimedUntil })
    .onConflict((oc) =>
      oc
        .column('post_id')
        .doUpdateSet({ refresh_claim: claim, refresh_claimed_until: claimedUntil })
        .where(sql<boolean>`comment_sync_states.refresh_claimed_until is null or comment_sync_states.refresh_claimed_until <= now()`),
    )
    .returning('post_id')
    .executeTakeFirst();
  return row !== undefined;
}

/** Extends the claim while `claim` still holds it; false when it ran out and another refresh took the post. */
export async function renewRefreshClaim(db: Db, postId: string, claim: string): Promise<boolean> {
  const row = await db
    .updateTable('comment_sync_states')
    .set({ refresh_claimed_until: claimedUntil })
    .where('post_id', '=', postId)
    .where('refresh_claim', '=', claim)
    .returning('post_id')
    .executeTakeFirst();
  return row !== undefined;
}

/** The refresh `claim` is done (a claim another refresh took since is left alone). */
export async function releaseRefreshClaim(db: Db, postId: string, claim: string): Promise<void> {
  await db
    .updateTable('comment_sync_states')
    .set({ refresh_claim: null, refresh_claimed_until: null })
    .where('post_id', '=', postId)
    .where('refresh_claim', '=', claim)
    .execute();
}
