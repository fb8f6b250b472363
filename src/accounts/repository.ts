import { sql, type Transaction } from 'kysely';
import type { Database, Db } from '../db';
import type { AccountRow, AccountUpdate, InactiveReason, NewAccountRow } from '../db/tables/accounts';
import type { User } from '../db/tables/users';
import { isUuid } from '../db/uuid';
import type { PlatformSlug } from '../platforms/types';

/**
 * The `accounts` table, as free functions taking `db` or a transaction first. Locking reads take a `Transaction`.
 *
 * Visibility: a disconnected account is gone as far as the API is concerned (not listed, 404 by id, its posts show
 * `account_id: null`); the row stays so that reconnecting the same platform account brings it back with its id.
 */

type Trx = Transaction<Database>;

/**
 * Reasons that give the plan slot back: the user chose to switch the account off or disconnect it. An account whose
 * connection was lost (or needs re-authorizing) keeps its slot, so reconnecting it never needs a free one.
 */
const slotReleasingReasons: readonly InactiveReason[] = ['deactivated', 'disconnected'];

/**
 * Serialises every account-limit decision of one user (connects, reconnects, re-activations). The row lock is
 * `FOR NO KEY UPDATE`, which such decisions take against each other, not `FOR UPDATE`, which also holds every insert
 * that references the user (its FK check's `FOR KEY SHARE`: posts, idempotency keys, events, quota, media) for as long
 * as the decision waits, e.g. on an account row a renewal holds. Nothing relies on holding those back: an account is
 * only inserted under this lock.
 */
export async function lockUserForAccounts(trx: Trx, userId: string): Promise<User> {
  return trx.selectFrom('users').selectAll().where('id', '=', userId).forNoKeyUpdate().executeTakeFirstOrThrow();
}

export async function countSlotHolders(trx: Trx, userId: string): Promise<number> {
  const row = await trx
    .selectFrom('accounts')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('user_id', '=', userId)
    .where((eb) => eb.or([eb('inactive_reason', 'is', null), eb('inactive_reason', 'not in', [...slotReleasingReasons])]))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export function holdsSlot(account: Pick<AccountRow, 'inactive_reason'>): boolean {
  return account.inactive_reason === null || !slotReleasingReasons.includes(account.inactive_reason);
}

export async function findByPlatformAccount(trx: Trx, userId: string, platform: PlatformSlug, platformAccountId: string): Promise<AccountRow | undefined> {
  return trx
    .selectFrom('accounts')
    .selectAll()
    .where('user_id', '=', userId)
    .where('platform', '=', platform)
    .where('platform_account_id', '=', platformAccountId)
    .forNoKeyUpdate()
    .executeTakeFirst();
}

/**
 * The user's account by id, disconnected ones included (the caller decides what they mean); none for a malformed id.
 * `lock`: `FOR NO KEY UPDATE`, as every account row lock here (`findByPlatformAccount`, a renewal's): it serialises
 * Herald's writers of the row without holding back the inserts that reference it (a post's FK check). A create racing
 * a switch-off or disconnect is not held back by it either way (its check passes once the change commits): such a
 * post is cancelled with the account's reason when its attempt finds the account off (`activities/posts.ts`).
 */
export async function findOwnAccount(db: Db | Trx, userId: string, accountId: string, options: { lock?: boolean } = {}): Promise<AccountRow | undefined> {
  if (!isUuid(accountId)) return undefined;
  let query = db.selectFrom('accounts').selectAll().where('id', '=', accountId).where('user_id', '=', userId);
  if (options.lock) query = query.forNoKeyUpdate();
  return query.executeTakeFirst();
}

/** Newest first; disconnected accounts are left out. */
export async function listVisibleAccounts(db: Db, userId: string): Promise<AccountRow[]> {
  return db
    .selectFrom('accounts')
    .selectAll()
    .where('user_id', '=', userId)
    .where((eb) => eb.or([eb('inactive_reason', 'is', null), eb('inactive_reason', '!=', 'disconnected')]))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

export async function insertAccount(trx: Trx, row: NewAccountRow): Promise<AccountRow> {
  return trx.insertInto('accounts').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function updateAccountRow(db: Db | Trx, accountId: string, changes: AccountUpdate): Promise<AccountRow> {
  return db
    .updateTable('accounts')
    .set({ ...changes, updated_at: sql<Date>`now()` })
    .where('id', '=', accountId)
    .returningAll()
    .executeTakeFirstOrThrow();
}
