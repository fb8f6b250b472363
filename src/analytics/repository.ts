import { sql } from 'kysely';
import type { Db } from '../db';
import type { PostAnalyticsRow } from '../db/tables/analytics';
import type { PostMetrics } from '../platforms/types';

/**
 * The analytics snapshot of a post (migration 0070). Every change is one named, conditional write: a platform read
 * is claimed only outside the floor and when no other read is in flight, and only the claim's owner stores its result
 * or gives the claim back.
 */

export async function findSnapshot(db: Db, postId: string): Promise<PostAnalyticsRow | undefined> {
  return db.selectFrom('post_analytics').selectAll().where('post_id', '=', postId).executeTakeFirst();
}

/**
 * Claims the platform read of a post: creates the row, or takes it when the floor has passed (`next_refresh_after`
 * at or before `now`) and no read is in flight (or the one in flight was claimed before `abandonedBefore`).
 * Concurrent claims meet on the row (insert conflict or row lock), so exactly one wins in any number of processes.
 * Returns the claimed row, or undefined when the read is not this caller's to make.
 */
export async function claimRefresh(db: Db, postId: string, claimId: string, now: Date, abandonedBefore: Date): Promise<PostAnalyticsRow | undefined> {
  return db
    .insertInto('post_analytics')
    .values({ post_id: postId, refresh_claim_id: claimId, refresh_claimed_at: now })
    .onConflict((oc) =>
      oc
        .column('post_id')
        .doUpdateSet({ refresh_claim_id: claimId, refresh_claimed_at: now, updated_at: sql`now()` })
        .where((eb) =>
          eb.and([
            eb.or([eb('post_analytics.next_refresh_after', 'is', null), eb('post_analytics.next_refresh_after', '<=', now)]),
            eb.or([eb('post_analytics.refresh_claim_id', 'is', null), eb('post_analytics.refresh_claimed_at', '<', abandonedBefore)]),
          ]),
        ),
    )
    .returningAll()
    .executeTakeFirst();
}

/** Stores what the claimed read found and ends the claim; undefined when the claim was taken over meanwhile. */
export async function storeSnapshot(
  db: Db,
  postId: string,
  claimId: string,
  snapshot: { metrics: PostMetrics; syncedAt: Date; nextRefreshAfter: Date },
): Promise<PostAnalyticsRow | undefined> {
  return db
    .updateTable('post_analytics')
    .set({
      metrics: JSON.stringify(snapshot.metrics),
      synced_at: snapshot.syncedAt,
      next_refresh_after: snapshot.nextRefreshAfter,
      refresh_claim_id: null,
      refresh_claimed_at: null,
      updated_at: sql`now()`,
    })
    .where('post_id', '=', postId)
    .where('refresh_claim_id', '=', claimId)
    .returningAll()
    .executeTakeFirst();
}

/**
 * A platform read that failed still counts against the floor (decisions.md: "a platform read within 5 minutes of the
 * last one ... is 429"), or a dashboard polling a post whose read keeps failing would call the platform on every
 * request and spend the token's rate limit that publishing shares. Ends the claim and sets the floor; the numbers and
 * `synced_at` of an earlier snapshot stay as they were.
 */
export async function recordFailedRead(db: Db, postId: string, claimId: string, nextRefreshAfter: Date): Promise<void> {
  await db
    .updateTable('post_analytics')
    .set({ next_refresh_after: nextRefreshAfter, refresh_claim_id: null, refresh_claimed_at: null, updated_at: sql`now()` })
    .where('post_id', '=', postId)
    .where('refresh_claim_id', '=', claimId)
    .execute();
}

/**
 * A read given up on at its budget that answered after all (its calls ignored the abort, or the answer was already on
 * its way): stored only while the row is still as its own failure left it (no claim, the floor that failure set), so
 * no read claimed since is overwritten; the floor stays. True when stored.
 */
export async function storeLateSnapshot(db: Db, postId: string, failureFloor: Date, snapshot: { metrics: PostMetrics; syncedAt: Date }): Promise<boolean> {
  const stored = await db
    .updateTable('post_analytics')
    .set({ metrics: JSON.stringify(snapshot.metrics), synced_at: snapshot.syncedAt, updated_at: sql`now()` })
    .where('post_id', '=', postId)
    .where('refresh_claim_id', 'is', null)
    .where('next_refresh_after', '=', failureFloor)
    .executeTakeFirst();
  return stored.numUpdatedRows > 0n;
}

/** A read that never reached the platform (no credentials to read with): the claim is given back, the floor unchanged. */
export async function releaseClaim(db: Db, postId: string, claimId: string): Promise<void> {
  await db
    .updateTable('post_analytics')
    .set({ refresh_claim_id: null, refresh_claimed_at: null, updated_at: sql`now()` })
    .where('post_id', '=', postId)
    .where('refresh_claim_id', '=', claimId)
    .execute();
}
