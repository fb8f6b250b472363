import type { SealedBox } from '../crypto/sealed-box';
import type { Db } from '../db';
import type { AccountRow } from '../db/tables/accounts';
import type { PlatformContext } from '../platforms/types';
import { platformContextOf } from './credentials';

/** The account is gone or its credentials were wiped (disconnected): nothing can be sent for it. */
export class AccountNotConnectedError extends Error {
  constructor(
    readonly accountId: string,
    readonly reason: 'not_found' | 'disconnected',
  ) {
    super(reason === 'not_found' ? `account ${accountId} does not exist` : `account ${accountId} was disconnected`);
    this.name = 'AccountNotConnectedError';
  }
}

/**
 * For activities: the account row and the adapter context (credentials opened with the user id as context,
 * settings from verification). It does not look at `active`: deleting an already published post of a deactivated
 * account still needs its credentials; callers that publish check `account.active` themselves.
 * Throws `AccountNotConnectedError` when the row is absent or disconnected.
 */
export async function loadPlatformContext(db: Db, sealedBox: SealedBox, accountId: string): Promise<{ account: AccountRow; ctx: PlatformContext }> {
  const account = await db.selectFrom('accounts').selectAll().where('id', '=', accountId).executeTakeFirst();
  if (!account) throw new AccountNotConnectedError(accountId, 'not_found');
  const ctx = platformContextOf(sealedBox, account);
  if (!ctx) throw new AccountNotConnectedError(accountId, 'disconnected');
  return { account, ctx };
}
