import { sql } from 'kysely';
import { platformContextOf } from '../accounts/credentials';
import { cancellationReasonOf, type AccountInactiveReason } from '../accounts/lifecycle';
import { AccountNotActiveError } from '../accounts/not-active';
import { AccountNotConnectedError, loadPlatformContext } from '../accounts/platform-context';
import type { Db } from '../db';
import { precompiled } from '../db/precompiled';
import type { AccountRow } from '../db/tables/accounts';
import { ApiError } from '../errors';
import { limitColumns, limitsOf } from '../quota/quota';
import { requireAvailablePlatform } from '../platforms/availability';
import type { PlatformContext } from '../platforms/types';
import { isStaleRead, postingAccountColumns, sameRows, type CreationRead, type PostingAccount, type VersionedRead } from './creation-reads';
import type { MarkedPost } from './attempt-marks';
import { accountPrefix } from './rules';
import type { PostsRuntime } from './runtime';

/**
 * What the posts feature needs from accounts, in one file: the active accounts a request names (404 otherwise), and
 * the accounts feature's own `loadPlatformContext` and `markConnectionLost` (`src/accounts/`).
 */

/** The user's active accounts of a read, in the order named; the first unknown, foreign or inactive one is 404 `not_found`. */
function postingAccountsOf(rows: readonly PostingAccount[], ids: readonly string[], fanOut: boolean): PostingAccount[] {
  const byId = new Map(rows.map((row) => [row.id.toLowerCase(), row]));
  return ids.map((id) => {
    const row = byId.get(id.toLowerCase());
    if (!row) throw new ApiError('not_found', fanOut ? `Account ${id}: account was not found` : `Account ${id} was not found`);
    if (!row.active) throw new AccountNotActiveError(fanOut ? `Account ${id}: account is not active` : `Account ${id} is not active`);
    return row;
  });
}

/** The account a stored post was made with (any state), or undefined when its row is gone. */
export async function accountOfPost(db: Db, accountId: string): Promise<AccountRow | undefined> {
  return db.selectFrom('accounts').selectAll().where('id', '=', accountId).executeTakeFirst();
}

/** Each account's platform must be open for posting (501 otherwise, prefixed in a fan-out). */
function publishableOf(rt: PostsRuntime, accounts: PostingAccount[], fanOut: boolean): PostingAccount[] {
  for (const account of accounts) {
    try {
      requireAvailablePlatform(account.platform, rt.config.comingSoon);
    } catch (err) {
      if (err instanceof ApiError) throw err.prefixed(accountPrefix(account, fanOut));
      throw err;
    }
  }
  return accounts;
}

// Compiled once, a named statement (src/db/precompiled.ts): every create without a kept read runs it (`fromLastRead`).
// `ids` are UUIDs (the request schema). Each row's `xmin` is its version, which a write from a kept read checks.
const accountsAndLimitsQuery = precompiled((db, { userId, ids }: { userId: string; ids: readonly string[] }) =>
  db
    .selectFrom('users')
    .leftJoin('accounts', (join) => join.onRef('accounts.user_id', '=', 'users.id').on('accounts.id', '=', sql<string>`any(${ids}::uuid[])`))
    .select(limitColumns.map((column) => `users.${column}` as const))
    .select([sql<string>`users.xmin::text`.as('user_version'), sql<string | null>`accounts.xmin::text`.as('account_version')])
    .select(postingAccountColumns.map((column) => `accounts.${column}` as const))
    .where('users.id', '=', userId),
);

/** The user's limits and the accounts named (those that exist and are the user's), with their rows' versions. */
async function readAccountsAndLimits(rt: PostsRuntime, userId: string, ids: readonly string[]): Promise<VersionedRead> {
  const rows = await accountsAndLimitsQuery.execute(rt.db, { userId, ids });
  if (rows.length === 0) throw new Error(`user ${userId} not found`);
  const accounts = rows
    .filter((row) => row.id !== null)
    .map((row) => ({ row: accountColumnsOf(row as PostingAccount), version: row.account_version! }));
  return { userId, limits: limitsOf(rows[0]!), userVersion: rows[0]!.user_version, accounts };
}

/**
 * `validateAndWrite` (a post's or a thread's create, up to and including its write) from this process's last read of
 * the accounts named and the user's limits when it has one, with no read before the write; made again from a fresh
 * read when that write found a row changed since (`unchangedSince`), or when that read refused the request and a
 * fresh read finds the rows changed (a refusal from current rows stands, its media not downloaded again).
 * `validateAndWrite` must write with `guardOf(read)` and nothing before a refusal it throws.
 */
export async function fromLastRead<T>(rt: PostsRuntime, userId: string, accountIds: readonly string[], validateAndWrite: (read: CreationRead) => Promise<T>): Promise<T> {
  const cached = rt.creationReads?.get(userId, accountIds);
  let refusal: ApiError | undefined;
  if (cached) {
    try {
      return await validateAndWrite(cached);
    } catch (err) {
      if (!(err instanceof ApiError) && !isStaleRead(err)) throw err;
      if (err instanceof ApiError) refusal = err;
      rt.creationReads!.forget(userId);
    }
  }
  const read = await readAccountsAndLimits(rt, userId, accountIds);
  rt.creationReads?.remember(read);
  // A refusal made from rows that have not changed stands: made again it would say the same, after downloading the
  // request's media URLs a second time.
  if (refusal && sameRows(cached!, read)) throw refusal;
  return validateAndWrite({ ...read, cached: false });
}

/**
 * The accounts a create or an edit names, in order (each the user's and active, 404 otherwise; each platform open for
 * posting, 501 otherwise), from a read of them and the user's limits (`readAccountsAndLimits`, or a kept one).
 */
export function publishableAccountsOf(rt: PostsRuntime, read: VersionedRead, ids: readonly string[], fanOut: boolean): PostingAccount[] {
  return publishableOf(rt, postingAccountsOf(read.accounts.map((account) => account.row), ids, fanOut), fanOut);
}

/**
 * The accounts named and the user's limits as they are now, in one statement (`readAccountsAndLimits`), for a write
 * that does not check what it read (an edit, `src/posts/update.ts`).
 */
export async function loadPublishableAccountsAndLimits(rt: PostsRuntime, userId: string, ids: readonly string[], fanOut: boolean) {
  const read = await readAccountsAndLimits(rt, userId, ids);
  return { accounts: publishableAccountsOf(rt, read, ids, fanOut), limits: read.limits };
}

/** The account's columns of a joined row, so nothing of the user's travels on as the account's. */
function accountColumnsOf(joined: PostingAccount): PostingAccount {
  const account: Record<string, unknown> = {};
  for (const column of postingAccountColumns) account[column] = joined[column];
  return account as PostingAccount;
}

/** The account's columns a mark returns with its row (`MarkedPost`, `MarkedFirstComment`). */
type ClaimedAccountColumns = Pick<MarkedPost, 'account_id' | 'account_active' | 'account_user_id' | 'account_settings' | 'account_credentials_sealed' | 'account_credential_expires_at' | 'account_credential_refused_at'>;

/**
 * The credentials a publish sends with, from a post marked with its account's columns (`claimDueScheduled`,
 * `beginPublishAttempts`, a first comment's `beginFirstCommentAttempt`), or null when its account can no longer send
 * (disconnected, deactivated, connection lost): the caller reports `account_inactive` and sends nothing.
 */
export function publishingContextOfClaimed(rt: PostsRuntime, row: ClaimedAccountColumns): PlatformContext | null {
  if (row.account_id === null || !row.account_active || row.account_user_id === null || row.account_settings === null) return null;
  return platformContextOf(rt.sealedBox, {
    id: row.account_id,
    user_id: row.account_user_id,
    credentials_sealed: row.account_credentials_sealed,
    settings: row.account_settings,
    credential_expires_at: row.account_credential_expires_at,
    credential_refused_at: row.account_credential_refused_at,
  });
}

/**
 * The cancellation value of a claimed scheduled row (a post, or a thread's part) whose account is switched off,
 * disconnected or lost (or whose row is gone), as the account's own cancellation gives it (publishing-api.md status
 * table); null for an immediate row or an account still on, whose attempt fails as before.
 */
export function cancellationOfClaimed(row: Pick<MarkedPost, 'scheduled_at' | 'account_id' | 'account_active' | 'account_user_id' | 'account_inactive_reason'>): AccountInactiveReason | null {
  return row.scheduled_at === null ? null : accountEndOfClaimed(row);
}

/** How a claimed row's account ended (switched off, disconnected, lost, or its row gone); null while it is on. */
export function accountEndOfClaimed(row: Pick<MarkedPost, 'account_id' | 'account_active' | 'account_user_id' | 'account_inactive_reason'>): AccountInactiveReason | null {
  if (row.account_id !== null && row.account_active) return null;
  return cancellationReasonOf(row.account_id === null || row.account_user_id === null ? null : { inactive_reason: row.account_inactive_reason });
}

export { loadPlatformContext, AccountNotConnectedError };
export { markConnectionLost } from '../accounts/lifecycle';
export { CredentialRenewalPending } from '../accounts/credential-keeping-adapters';
export { renewalOverdueMessage } from '../accounts/credential-sentences';
