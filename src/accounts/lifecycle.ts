import { sql, type Transaction } from 'kysely';
import type { Database, Db } from '../db';
import type { AccountRow } from '../db/tables/accounts';
import { inTransaction } from '../db/in-transaction';
import { recordEvents } from '../events/outbox';
import { toAccountView } from './view';

/**
 * What happens to the rest of Herald when an account stops being usable (decisions.md "Accounts"): its scheduled
 * posts are cancelled with `error_message` set to the reason and their quota returned. The posts feature implements
 * it; the accounts service calls it after its own transaction has committed.
 *
 * Implementations must be idempotent: the accounts service calls it again on every repeated deactivate or
 * disconnect request, so a cancellation that failed after an earlier commit is finished by the retry.
 */
export type AccountInactiveReason = 'account_deactivated' | 'account_disconnected' | 'connection_lost';

/**
 * The cancellation value (publishing-api.md "error_message values") of a scheduled post whose account is switched off
 * in this state; a row gone counts as disconnected. One switched off while it needed re-authorizing for comments
 * (before 2026-11-28 it kept that reason) was switched off by the user: `account_deactivated`.
 */
export function cancellationReasonOf(account: Pick<AccountRow, 'inactive_reason'> | null): AccountInactiveReason {
  if (account === null || account.inactive_reason === 'disconnected') return 'account_disconnected';
  return account.inactive_reason === 'connection_lost' ? 'connection_lost' : 'account_deactivated';
}

export interface AccountLifecycle {
  accountDeactivated(accountId: string, reason: AccountInactiveReason): Promise<void>;
}

/**
 * The condition of a connection lost because the stored credential ended (nothing could renew it): its end has passed
 * by `credentialEndedBy`. A reconnect since stored a new credential whose end is later, which the write leaves alone.
 */
interface LostWhen {
  credentialEndedBy: Date;
}

/**
 * A platform stopped accepting the account's credential: the account becomes inactive with `connection_lost`.
 * Only an active account changes (a deactivated or disconnected one keeps the user's reason). Resolves true when it
 * changed the row. The credentials are kept (the user may reconnect the same platform account, which reuses the row),
 * except a refresh token the platform refused, which the refused renewal drops first (`credential-renewal.ts`).
 * With `lifecycle`, its scheduled posts are then cancelled with `connection_lost`, also when the account was found
 * `connection_lost` already (a repeated call finishes a cancellation that failed after the change committed); without
 * it the caller must call `lifecycle.accountDeactivated(accountId, 'connection_lost')` itself. Its
 * `account.connection_lost` event is written in the same transaction.
 */
export async function markConnectionLost(db: Transaction<Database>, accountId: string): Promise<boolean>;
// The lifecycle's cancellation takes connections of the pool: inside a caller's transaction it would wait for a second
// connection while holding one (threads due together once took a whole pool that way), so only the pool may pass one.
export async function markConnectionLost(db: Db, accountId: string, lifecycle?: AccountLifecycle, when?: LostWhen): Promise<boolean>;
export async function markConnectionLost(db: Db | Transaction<Database>, accountId: string, lifecycle?: AccountLifecycle, when?: LostWhen): Promise<boolean> {
  const changed = await inTransaction(db, async (trx) => {
    const lost = await trx
      .updateTable('accounts')
      .set({ active: false, inactive_reason: 'connection_lost', updated_at: sql<Date>`now()` })
      .where('id', '=', accountId)
      .where('active', '=', true)
      .$if(when !== undefined, (qb) => qb.where('credential_expires_at', '<=', when!.credentialEndedBy))
      .returningAll()
      .executeTakeFirst();
    if (lost) await recordEvents(trx, [{ userId: lost.user_id, type: 'account.connection_lost', data: toAccountView(lost) }]);
    return lost;
  });
  if (lifecycle && (changed || (await isConnectionLost(db, accountId)))) await lifecycle.accountDeactivated(accountId, 'connection_lost');
  return changed !== undefined;
}

async function isConnectionLost(db: Db | Transaction<Database>, accountId: string): Promise<boolean> {
  const row = await db.selectFrom('accounts').select('inactive_reason').where('id', '=', accountId).executeTakeFirst();
  return row?.inactive_reason === 'connection_lost';
}

/**
 * The user switched the account off (PATCH `active: false`): `deactivated`, the reason its cancelled posts carry
 * (publishing-api.md: the account's `inactive_reason` states the same). Only an active account changes: a
 * `connection_lost` one, already off, is left as it is, so that switching it on again still asks for a reconnect
 * instead of forgetting the dead credential. One that needed re-authorizing for comments (it still posts) becomes
 * `deactivated` like any other and can be switched on again; the platform's next comment refusal says so again.
 * Resolves the changed row, or undefined when nothing changed.
 */
export async function markDeactivated(trx: Transaction<Database>, accountId: string): Promise<AccountRow | undefined> {
  return trx
    .updateTable('accounts')
    .set({ active: false, inactive_reason: 'deactivated', updated_at: sql<Date>`now()` })
    .where('id', '=', accountId)
    .where('active', '=', true)
    .returningAll()
    .executeTakeFirst();
}

/**
 * A platform refused a comment operation because the connection lacks a permission (publishing-api.md
 * "Authentication" 6): comment operations answer 409 `comment_permission_required` until the account is reconnected,
 * while posting, scheduling and analytics keep working, so the account stays `active` and only `inactive_reason`
 * says `reauthorization_required`. A reason already set (the user's, or a lost connection) is kept. Reconnecting
 * (`connectAccount`) clears it. Resolves true when it changed the row.
 */
export async function markReauthorizationRequired(db: Db, accountId: string): Promise<boolean> {
  const changed = await db
    .updateTable('accounts')
    .set({ inactive_reason: 'reauthorization_required', updated_at: sql<Date>`now()` })
    .where('id', '=', accountId)
    .where('active', '=', true)
    .where('inactive_reason', 'is', null)
    .returning('id')
    .executeTakeFirst();
  return changed !== undefined;
}
