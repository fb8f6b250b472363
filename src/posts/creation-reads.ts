import { sql, type RawBuilder } from 'kysely';
import type { EffectiveLimits, PlanName } from '../plans';
import type { AccountRow } from '../db/tables/accounts';

/**
 * What a create read last, per user, in this API process (issue 15: one statement of four before an immediate post's
 * answer): the user's limits and the accounts the user's creates named, each with its row's version (`xmin`, which
 * every update of the row changes).
 *
 * A cached read never decides anything on its own:
 * - a create made from it writes only if none of those rows changed since: its statement carries their versions
 *   (`unchangedSince`) and fails otherwise, with nothing written (`isStaleRead`);
 * - a create it refused (an account not found or inactive, a rule of the plan, a hard limit) is not answered from it.
 *
 * In both cases the caller (`fromLastRead` in `accounts-port.ts`) forgets the user's read and makes the create again
 * from a fresh one. So a plan changed, an account disconnected or reconnected in any process applies to the next create
 * here exactly as with a read per create; what the cache saves is the read of rows that did not change.
 */

/**
 * The columns of an account a create or an edit decides with (the rules' `RuleAccount`, and whether it can post).
 * Never its credentials: a create does not send, and the kept reads would otherwise hold them in memory.
 */
export const postingAccountColumns = ['id', 'platform', 'active', 'premium', 'own_credentials', 'via', 'kind', 'timezone'] as const;
export type PostingAccount = Pick<AccountRow, (typeof postingAccountColumns)[number]>;

/** The user's limits and each account's row as read (`readAccountsAndLimits`), with the rows' versions. */
export interface VersionedRead {
  userId: string;
  limits: EffectiveLimits & { planName: PlanName };
  userVersion: string;
  accounts: ReadonlyArray<{ row: PostingAccount; version: string }>;
}

/** Whether two reads saw the same rows: the user's and each account's, at the same versions. */
export function sameRows(a: VersionedRead, b: VersionedRead): boolean {
  const versions = (read: VersionedRead) => JSON.stringify([read.userVersion, read.accounts.map((account) => [account.row.id, account.version]).sort()]);
  return versions(a) === versions(b);
}

/** A read of the accounts a create names, and whether it came from this process's cache. */
export interface CreationRead extends VersionedRead {
  cached: boolean;
}

interface CachedUser {
  limits: VersionedRead['limits'];
  userVersion: string;
  accounts: Map<string, { row: PostingAccount; version: string }>;
  readAt: number;
}

/** The condition a write from `read` carries: none for a fresh read (as before the cache), `unchangedSince` for a cached one. */
export function guardOf(read: CreationRead): RawBuilder<boolean> | undefined {
  return read.cached ? unchangedSince(read) : undefined;
}

/** The SQLSTATE a create's statement fails with when a row it was validated against changed (`herald_refuse`). */
const staleReadCode = 'HS412';

export function isStaleRead(err: unknown): boolean {
  return (err as { code?: string } | null)?.code === staleReadCode;
}

/**
 * A condition for the create's statement: true when the user's row and every account row of `read` are still the
 * versions read; otherwise it fails the statement (`staleReadCode`), which rolls back everything the statement wrote.
 */
function unchangedSince(read: VersionedRead): RawBuilder<boolean> {
  const ids = read.accounts.map((account) => account.row.id);
  const versions = read.accounts.map((account) => account.version);
  return sql<boolean>`case
    when (select count(*) from users where id = ${read.userId} and xmin::text = ${read.userVersion})
       + (select count(*) from accounts join unnest(${ids}::uuid[], ${versions}::text[]) as seen(id, version)
            on accounts.id = seen.id and accounts.xmin::text = seen.version) = ${1 + ids.length}::integer
    then true
    else herald_refuse(${staleReadCode}, 'the user or an account changed since it was read')
  end`;
}

/**
 * The cache: per user, the limits and every account read for that user's creates, for `ttlMs` after the read that
 * brought the user's row (a longer wait means a fresh read), at most `maxUsers` users (the least recently read go).
 */
export class CreationReads {
  private readonly users = new Map<string, CachedUser>();

  constructor(
    private readonly options: { ttlMs: number; maxUsers: number; clock: () => number } = { ttlMs: 5 * 60_000, maxUsers: 10_000, clock: Date.now },
  ) {}

  /** The cached read of `accountIds` for `userId`, when every one of them is cached and the read is recent enough. */
  get(userId: string, accountIds: readonly string[]): CreationRead | undefined {
    const user = this.users.get(userId);
    if (!user || this.options.clock() - user.readAt > this.options.ttlMs) return undefined;
    const accounts: Array<{ row: PostingAccount; version: string }> = [];
    for (const id of accountIds) {
      const account = user.accounts.get(id.toLowerCase());
      if (!account) return undefined;
      accounts.push(account);
    }
    return { userId, limits: user.limits, userVersion: user.userVersion, accounts, cached: true };
  }

  /** Keeps a fresh read: its user's row replaces the one kept; its accounts join those kept (each has its version). */
  remember(read: VersionedRead): void {
    const accounts = this.users.get(read.userId)?.accounts ?? new Map<string, { row: PostingAccount; version: string }>();
    for (const account of read.accounts) accounts.set(account.row.id.toLowerCase(), account);
    this.users.delete(read.userId);
    this.users.set(read.userId, { limits: read.limits, userVersion: read.userVersion, accounts, readAt: this.options.clock() });
    if (this.users.size > this.options.maxUsers) this.users.delete(this.users.keys().next().value!);
  }

  forget(userId: string): void {
    this.users.delete(userId);
  }
}
