import type { Transaction } from 'kysely';
import type { Database, Db } from './index';

/**
 * Runs `work` in the caller's transaction when given one, else in a new one. Kysely refuses to nest
 * (`Transaction.transaction()` throws), and a write that must commit with its event (an outbox row) is called both
 * on its own and from inside a larger transaction (a credential renewal holding the account's row lock).
 */
export function inTransaction<T>(db: Db | Transaction<Database>, work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  return db.isTransaction ? work(db as Transaction<Database>) : db.transaction().execute(work);
}
