import type { ColumnType } from 'kysely';

/** One row per (user, Idempotency-Key). See api/idempotency.ts for the protocol. */
interface IdempotencyKeysTable {
  user_id: string;
  key: string;
  /** SHA-256 of method, path and canonical JSON body. */
  fingerprint: string;
  method: string;
  path: string;
  state: 'in_progress' | 'completed';
  /** Renewed while the first request runs; another request may take over an in-progress row whose lease ran out. */
  locked_until: Date;
  /**
   * The id of the claim that holds the row (a new one each claim or takeover); renewal, the stored answer and the
   * release are written only under it, so a request whose claim was taken over writes nothing (migration 0251).
   * Null on rows written before it.
   */
  claim_id: string | null;
  response_status: number | null;
  /** The JSON body exactly as first sent (text, so its key order survives); null for a response without a body. */
  response_body: string | null;
  response_headers: ColumnType<Record<string, string> | null, string | null | undefined, string | null>;
  created_at: ColumnType<Date, Date | string | undefined, Date | string>;
  /**
   * What the claim's request committed, written in the same statement as its rows (`src/idempotency/key-claim.ts`),
   * so that a takeover after a crash answers from them instead of running the request again (migration 0291).
   */
  made: ColumnType<unknown, string | null | undefined, string | null>;
}

export interface IdempotencyTables {
  idempotency_keys: IdempotencyKeysTable;
}

