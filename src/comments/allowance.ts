import { DateTime } from 'luxon';
import { sql } from 'kysely';
import type { Db } from '../db';
import { inTransaction } from '../db/in-transaction';
import { planLabel, type PlanName } from '../plans';
import { platformName } from '../platforms/availability';
import type { PlatformSlug } from '../platforms/types';
import { usageMonth } from '../quota/quota';

/**
 * The comment allowances of publishing-api.md ("Comment sync allowances", sync rules 7 and 8): one comment sync per
 * refresh of one post, and on x one comment read per reply x returns. Both are counters of the user's
 * `usage_months` row, taken by one conditional statement each (the row lock serialises concurrent refreshes, so a
 * limit is never overshot) and given back when the refresh read nothing.
 */

export interface AllowanceLimits {
  planName: PlanName;
  commentSyncsPerMonth: number;
  xCommentReadsPerMonth: number;
}

/** Accounts connected with the user's own X API credentials pay X themselves: their reads are not counted. */
export function countsXReads(platform: PlatformSlug, ownCredentials: boolean): boolean {
  return platform === 'x' && !ownCredentials;
}

function resetsOn(now: Date): string {
  return DateTime.fromJSDate(now, { zone: 'utc' }).startOf('month').plus({ months: 1 }).toISODate() ?? '';
}

/** Sync rule 7: x comment reads not included in the plan (Free). Null when the plan allows reading. */
export function planRefusal(platform: PlatformSlug, ownCredentials: boolean, limits: AllowanceLimits): string | null {
  if (!countsXReads(platform, ownCredentials) || limits.xCommentReadsPerMonth > 0) return null;
  return `Reading ${platformName(platform)} comments is not included in ${planLabel(limits.planName)}; upgrade, or connect the account with your own X API credentials. The comments shown were stored earlier.`;
}

export function syncBudgetReason(limits: AllowanceLimits, now: Date): string {
  return `The monthly comment sync allowance of ${planLabel(limits.planName)} (${limits.commentSyncsPerMonth.toLocaleString('en-US')} syncs) is spent; comments refresh again from ${resetsOn(now)} (UTC). The comments shown are from the last sync.`;
}

export function xReadsBudgetReason(limits: AllowanceLimits, now: Date, partial: boolean): string {
  const shown = partial ? 'This refresh stopped part-way; the comments shown include the replies read before it ran out.' : 'The comments shown are from the last sync.';
  return `The monthly X comment read allowance of ${planLabel(limits.planName)} (${limits.xCommentReadsPerMonth.toLocaleString('en-US')} replies) is spent; X comments refresh again from ${resetsOn(now)} (UTC). ${shown}`;
}

async function ensureMonthRow(db: Db, userId: string, month: string): Promise<void> {
  await db.insertInto('usage_months').values({ user_id: userId, month }).onConflict((oc) => oc.columns(['user_id', 'month']).doNothing()).execute();
}

/** Takes one comment sync of the month of `now`; false when the allowance is spent (nothing taken). */
export async function takeCommentSync(db: Db, userId: string, limit: number, now: Date): Promise<boolean> {
  const month = usageMonth(now);
  await ensureMonthRow(db, userId, month);
  let update = db
    .updateTable('usage_months')
    .set({ comment_syncs: sql`comment_syncs + 1` })
    .where('user_id', '=', userId)
    .where('month', '=', month);
  if (Number.isFinite(limit)) update = update.where('comment_syncs', '<', limit);
  const taken = await update.returning('comment_syncs').executeTakeFirst();
  return taken !== undefined;
}

/** A refresh that read nothing (the platform refused, the x allowance was already spent) costs no sync. */
export async function giveBackCommentSync(db: Db, userId: string, now: Date): Promise<void> {
  await db
    .updateTable('usage_months')
    .set({ comment_syncs: sql`greatest(0, comment_syncs - 1)` })
    .where('user_id', '=', userId)
    .where('month', '=', usageMonth(now))
    .execute();
}

/**
 * Takes up to `wanted` x comment reads of the month of `now` and returns how many it got (0 when spent). The caller
 * gives back what a page did not use.
 */
export async function takeXCommentReads(db: Db, userId: string, limit: number, wanted: number, now: Date): Promise<number> {
  const month = usageMonth(now);
  await ensureMonthRow(db, userId, month);
  if (!Number.isFinite(limit)) {
    await db.updateTable('usage_months').set({ x_comment_reads: sql`x_comment_reads + ${wanted}` }).where('user_id', '=', userId).where('month', '=', month).execute();
    return wanted;
  }
  // The count is read under the row's lock: a lock waited for hands back the row as the other refresh left it, where
  // a statement's own snapshot (a subselect beside the update) still saw it as before, and over-reported the grant
  // by what the other refresh took, which the caller then gave back.
  return inTransaction(db, async (trx) => {
    const row = await trx.selectFrom('usage_months').select('x_comment_reads').where('user_id', '=', userId).where('month', '=', month).forUpdate().executeTakeFirstOrThrow();
    const granted = Math.max(0, Math.min(wanted, limit - row.x_comment_reads));
    if (granted > 0) {
      await trx.updateTable('usage_months').set({ x_comment_reads: sql`x_comment_reads + ${granted}::int` }).where('user_id', '=', userId).where('month', '=', month).execute();
    }
    return granted;
  });
}

export async function giveBackXCommentReads(db: Db, userId: string, count: number, now: Date): Promise<void> {
  if (count <= 0) return;
  await db
    .updateTable('usage_months')
    .set({ x_comment_reads: sql`greatest(0, x_comment_reads - ${count}::int)` })
    .where('user_id', '=', userId)
    .where('month', '=', usageMonth(now))
    .execute();
}
