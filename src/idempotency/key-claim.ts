import { AsyncLocalStorage } from 'node:async_hooks';
import { sql, type RawBuilder, type Transaction } from 'kysely';
import type { Database } from '../db';
import { ApiError } from '../errors';

/**
 * The `Idempotency-Key` claim a request runs under (api/idempotency.ts), as the creates see it: a create records what
 * it made (`made`) in the statement that writes its rows, so the record and the rows commit together. The answer is
 * stored in a later write; when the process dies between the two, the claim lapses with its lease and the retry with
 * the same key takes it over, finds `made`, and answers from those rows (the route's `resume`) instead of creating
 * again. Bound per request like the request origin (`src/events/request-origin.ts`), so the services need not pass it.
 */
interface KeyClaim {
  userId: string;
  key: string;
  claimId: string;
}

const storage = new AsyncLocalStorage<KeyClaim>();

export function withKeyClaim<T>(claim: KeyClaim, run: () => Promise<T>): Promise<T> {
  return storage.run(claim, run);
}

/**
 * What a create's statement carries to record `made` under the request's claim: a CTE (`cte`, named `claim_made`) and
 * a condition (`holds`) that fails the statement, writing nothing, when the claim no longer holds the key (the request
 * stalled past its lease and an identical one took it over: that one creates, this one must not).
 */
export interface ClaimRecord {
  cte: RawBuilder<unknown>;
  holds: RawBuilder<boolean>;
}

/** The SQLSTATE of a create whose claim was taken over (`herald_refuse`). */
const claimLostCode = 'HI409';

/** The record of `made` under the current request's claim; undefined without a key (nothing to record). */
export function claimRecordOf(made: unknown): ClaimRecord | undefined {
  const claim = storage.getStore();
  if (!claim) return undefined;
  return {
    cte: sql`claim_made as (
      update idempotency_keys set made = ${JSON.stringify(made)}::json
      where user_id = ${claim.userId} and key = ${claim.key} and claim_id = ${claim.claimId} and state = 'in_progress'
      returning 1)`,
    holds: sql<boolean>`case when exists (select from claim_made) then true
      else herald_refuse(${claimLostCode}, 'the Idempotency-Key claim was taken over by an identical request') end`,
  };
}

/**
 * Records `made` under the current claim in a create that runs as a transaction (a connect): one statement more, only
 * under a key; it fails the transaction when the claim no longer holds the key (`isClaimLost`).
 */
export async function recordMadeIn(trx: Transaction<Database>, made: unknown): Promise<void> {
  const record = claimRecordOf(made);
  if (record) await sql`with ${record.cte} select ${record.holds} as held`.execute(trx);
}

/** `guard` and the claim's condition, as one condition of a create's statement (either may be absent). */
export function withClaimHolds(guard: RawBuilder<boolean> | undefined, record: ClaimRecord | undefined): RawBuilder<boolean> | undefined {
  if (!record) return guard;
  return guard ? sql<boolean>`(${guard} and ${record.holds})` : record.holds;
}

export function isClaimLost(err: unknown): boolean {
  return (err as { code?: string } | null)?.code === claimLostCode;
}

/**
 * 409 `idempotency_in_progress`: an identical request holds the key and has not answered yet; or a takeover's rows,
 * made by an earlier claim, have not settled (an immediate post still publishing, its workflow perhaps not restarted
 * yet: `untilMadeSettled`); or this request's claim was taken over before its create wrote. Never stored: what was made
 * stays under the key, so the next retry answers from it (api/idempotency.ts).
 */
export class StillInProgress extends ApiError {
  constructor() {
    super('idempotency_in_progress', 'A request with this Idempotency-Key is still being processed; retry shortly to receive its response');
  }
}
