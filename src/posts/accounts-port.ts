import type { Db } from '../db';
import type { AccountRow } from '../db/tables/accounts';
import { ApiError } from '../errors';

/**
 * What the posts feature needs from accounts, in one file: the active accounts a request names (404 otherwise), and
 * the accounts feature's own `loadPlatformContext` and `markConnectionLost` (`src/accounts/`).
 */

/** The user's active accounts, in the order named; the first unknown, foreign or inactive one is 404 `not_found`. */
export async function loadPostingAccounts(db: Db, userId: string, ids: readonly string[], fanOut: boolean): Promise<AccountRow[]> {
  const rows = ids.length === 0 ? [] : await db.selectFrom('accounts').selectAll().where('user_id', '=', userId).where('id', 'in', ids).execute();
  const byId = new Map(rows.map((row) => [row.id.toLowerCase(), row]));
  return ids.map((id) => {
    const row = byId.get(id.toLowerCase());
    if (!row || !row.active) {
      const what = row ? 'is not active' : 'was not found';
      throw new ApiError('not_found', fanOut ? `Account ${id}: account ${what}` : `Account ${id} ${what}`);
    }
    return row;
  });
}

export { loadPlatformContext, AccountNotConnectedError } from '../accounts/platform-context';
export { markConnectionLost } from '../accounts/lifecycle';
export type { AccountLifecycle, AccountInactiveReason } from '../accounts/lifecycle';
