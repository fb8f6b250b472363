import type { Db } from '../db';

/** Each account's scheduled times (the 5-minute spacing rule), without `exceptPostIds` (posts that move themselves). */
export async function scheduledTimesOf(db: Db, accountIds: readonly string[], exceptPostIds: readonly string[] = []): Promise<Record<string, Date[]>> {
  if (accountIds.length === 0) return {};
  let query = db
    .selectFrom('posts')
    .select(['account_id', 'scheduled_at'])
    .where('account_id', 'in', accountIds)
    .where('status', '=', 'scheduled')
    .where('scheduled_at', 'is not', null);
  if (exceptPostIds.length) query = query.where('id', 'not in', exceptPostIds);
  const out: Record<string, Date[]> = {};
  for (const row of await query.execute()) (out[row.account_id!] ??= []).push(row.scheduled_at!);
  return out;
}
