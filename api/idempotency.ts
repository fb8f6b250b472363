import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Db } from '../src/db';
import { ApiError, PassingRefusal } from '../src/errors';
import { isClaimLost, StillInProgress, withKeyClaim } from '../src/idempotency/key-claim';
import type { Logger } from '../src/logger';
import { claimKey, idempotencyWindowMs, readKey, releaseClaim, releaseUnlessMade, renewClaim, storeAnswer, type Claim, type StoredResponse } from './idempotency-repository';

/**
 * `Idempotency-Key` as publishing-api.md specifies it, stored in Postgres so that it holds across API processes (the
 * rows and their writes: `api/idempotency-repository.ts`).
 *
 * Protocol, per (user, key):
 * 1. Claim the key with one INSERT ... ON CONFLICT. Exactly one request wins the claim and executes; its row is
 *    `in_progress` with a lease it renews while running.
 * 2. Everyone else reads the row: a different method, path or body is 422 `idempotency_key_reused`; a completed
 *    row is replayed with `Idempotent-Replay: true`; an in-progress row is waited for (up to `waitMs`) so identical
 *    concurrent requests all get the same answer, and after that the answer is 409 `idempotency_in_progress`.
 * 3. The outcome is stored when it is a client-visible answer (2xx-4xx, including `ApiError`s the handler threw)
 *    that a retry would get again, or a 5xx that reports a change made (`changedRefusals`). Another 5xx, an
 *    unexpected failure, or a refusal that says "not now" (`keptForReplay`) deletes the claim instead, so the client
 *    may retry with the same key.
 * 4. Rows older than the 24-hour window no longer count: the key can be claimed afresh. A claim whose lease ran out
 *    (its process died) can be taken over by an identical request.
 * 5. Each claim has its own id (`claim_id`), and every write of the row while claimed (renewal, stored outcome,
 *    release) is conditional on it: a request that stalled past its lease and was taken over writes nothing, so it
 *    can neither overwrite the new claimant's stored answer nor delete its claim. Its own client still gets what it
 *    did (its effects happened); the loss is logged.
 * 6. An outcome the database will not store is still the client's answer; the claim then stays held (its lease
 *    renewed) while the store is tried again in the background, so a retry meanwhile is 409 `idempotency_in_progress`
 *    and then the replay, never a second run. A refusal that changed nothing is released instead (`settleUnstored`).
 * 7. A create records what it made (`made`) in the statement of its rows, only while its claim holds the key
 *    (`src/idempotency/key-claim.ts`). A takeover of a claim whose process died after that gets `made` and answers from
 *    those rows (the route's `resume`, replayed) instead of making them again; an unexpected failure after it keeps
 *    the key claimed with its lease ended (`releaseUnlessMade`), for the retry to answer so.
 */

const maxIdempotencyKeyLength = 255;

export interface IdempotencyOptions {
  /** How long an identical request waits for the first one to finish before answering 409. */
  waitMs?: number;
  pollMs?: number;
  /** Lease of a running request; renewed every third of it. */
  leaseMs?: number;
  windowMs?: number;
}

const defaults: Required<IdempotencyOptions> = {
  waitMs: 10_000,
  pollMs: 50,
  leaseMs: 60_000,
  windowMs: idempotencyWindowMs,
};

interface IdempotentRequest {
  userId: string;
  key: string;
  method: string;
  /** The route's path with its parsed params (`api/app.ts` `fingerprintPath`), without the query string. */
  path: string;
  body: unknown;
}

/** Reads the header: null when absent; 400 `idempotency_key_invalid` when blank or longer than 255 characters. */
export function parseIdempotencyKey(header: string | string[] | undefined): string | null {
  if (header === undefined) return null;
  const value = Array.isArray(header) ? header.join(', ') : header;
  if (value.trim() === '') {
    throw new ApiError('idempotency_key_invalid', 'Idempotency-Key must not be blank');
  }
  if (value.length > maxIdempotencyKeyLength) {
    throw new ApiError(
      'idempotency_key_invalid',
      `Idempotency-Key must be at most ${maxIdempotencyKeyLength} characters (got ${value.length})`,
    );
  }
  return value;
}

function requestFingerprint(method: string, path: string, body: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify([method.toUpperCase(), path, canonical(body ?? null)]))
    .digest('hex');
}

/** JSON with object keys sorted, so `{"a":1,"b":2}` and `{"b":2,"a":1}` are the same request. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
}

/** `execute`: the handler; `resume`: the answer from what an earlier claim made (rule 7), on routes that record it. */
export async function runIdempotent(
  { db, logger }: { db: Db; logger: Logger },
  request: IdempotentRequest,
  { execute, resume }: { execute: () => Promise<StoredResponse>; resume?: (made: unknown) => Promise<StoredResponse> },
  options: IdempotencyOptions = {},
): Promise<{ response: StoredResponse; replayed: boolean }> {
  const opts = { ...defaults, ...options };
  const fingerprint = requestFingerprint(request.method, request.path, request.body);
  const deadline = Date.now() + opts.waitMs;

  for (;;) {
    const claimed = await claimKey(db, { ...request, fingerprint }, opts);
    if (claimed !== null) {
      const claim = { ...request, claimId: claimed.claimId };
      const resumed = claimed.made !== null && resume !== undefined;
      const run = resumed ? () => resume(claimed.made) : () => withKeyClaim(claim, execute);
      return { response: await executeClaimed({ db, logger }, claim, run, opts), replayed: resumed };
    }
    const row = await readKey(db, request);
    if (!row) continue; // released between our claim and our read: claim again
    if (row.fingerprint !== fingerprint) {
      throw new ApiError(
        'idempotency_key_reused',
        `This Idempotency-Key was already used for a different request (${row.method} ${row.path} with another body); use a new key for a new request`,
      );
    }
    if (row.state === 'completed') {
      return {
        response: { status: row.response_status!, body: storedBody(row.response_body), headers: row.response_headers ?? {} },
        replayed: true,
      };
    }
    if (Date.now() >= deadline) throw new StillInProgress();
    await sleep(opts.pollMs);
  }
}

/**
 * The stored body, parsed from the JSON text first sent. Serialising what `JSON.parse` gives back yields that same
 * text (same key order, same numbers and escapes), so the replay answers byte for byte what the first request did.
 */
function storedBody(text: string | null): unknown {
  return text === null ? undefined : JSON.parse(text);
}

/** The request whose claim holds the key, as it runs (`Claim`, with what the log names). */
type ClaimedRequest = IdempotentRequest & Claim;

async function executeClaimed(
  { db, logger }: { db: Db; logger: Logger },
  request: ClaimedRequest,
  execute: () => Promise<StoredResponse>,
  opts: Required<IdempotencyOptions>,
): Promise<StoredResponse> {
  const renew = setInterval(() => {
    renewClaim(db, request, opts.leaseMs).catch(() => undefined);
  }, Math.max(1, Math.floor(opts.leaseMs / 3)));
  renew.unref();

  let response: StoredResponse;
  let refusalKept = false;
  // A refusal the handler threw changed nothing, but for `changedRefusals`: running it again is safe.
  let changedNothing = false;
  try {
    response = await execute();
  } catch (thrown) {
    // A create whose claim was taken over (its lease ran out) wrote nothing: the takeover makes it and answers.
    const err = isClaimLost(thrown) ? new StillInProgress() : thrown;
    if (!(err instanceof ApiError) || err instanceof StillInProgress || !keptForReplay(err)) {
      clearInterval(renew);
      // An unexpected failure may follow a committed create: what it made stays, for the retry to answer from.
      const keepMade = !(err instanceof ApiError) || err instanceof StillInProgress;
      await release(db, logger, request, err instanceof ApiError ? err.status : 500, keepMade);
      throw err;
    }
    response = { status: err.status, body: err.toEnvelope(), headers: err.headers };
    refusalKept = true;
    changedNothing = !changedRefusals.has(err.code);
  }
  clearInterval(renew);
  if (response.status >= 500 && !refusalKept) {
    await release(db, logger, request, response.status);
    return response;
  }
  const stored = await storeOrLog(db, logger, request, response);
  if (stored === false) logClaimLost(logger, request, response.status, 'its answer was not stored');
  if (stored === undefined) settleUnstored({ db, logger }, request, response, changedNothing, opts);
  return response;
}

/** Pauses before each further try of storing an answer the database refused (a dropped connection, a failover). */
const storeRetryPausesMs = [100, 500];

/** Pauses between background tries of settling an unstored outcome (`settleUnstored`); the last one repeats. */
const settleRetryPausesMs = [1_000, 2_000, 5_000, 10_000, 20_000];

/**
 * `storeAnswer`, tried again over a moment when the database refuses it; when it still does, the answer goes to the
 * client anyway (undefined; logged) and `settleUnstored` takes over. The request's effects happened: a 500 would
 * tell the client to retry, and its retry with the same key would run them again (a post published twice).
 */
async function storeOrLog(db: Db, logger: Logger, request: ClaimedRequest, response: StoredResponse): Promise<boolean | undefined> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await storeAnswer(db, request, response);
    } catch (err) {
      if (attempt >= storeRetryPausesMs.length) {
        logger.error(
          { err, userId: request.userId, idempotencyKey: request.key, method: request.method, path: request.path, status: response.status },
          'Idempotency-Key answer not stored; answered anyway, and tried again in the background (the key stays claimed meanwhile)',
        );
        return undefined;
      }
      await sleep(storeRetryPausesMs[attempt]!);
    }
  }
}

/**
 * Settles, in the background, an outcome whose store the database refused: a refusal that changed nothing (`release`
 * true) gives the key back, as a "not now" refusal does, since running it again is safe; anything else is stored.
 * Each try first renews the claim's lease, and the pauses stay under a third of it, so while the database answers at
 * all no retry takes the key over and runs the request a second time (the claim used to lapse with its lease, and
 * the next retry ran the request again: a post published twice). Retries meanwhile wait, then
 * get 409 `idempotency_in_progress` ("retry to collect the replay"), then the replay. Tried until the key's window
 * ends; an answer the database never takes keeps the key claimed while this process lives. Left: a process that dies
 * first leaves the claim to lapse as a crash does.
 */
function settleUnstored(
  { db, logger }: { db: Db; logger: Logger },
  request: ClaimedRequest,
  response: StoredResponse,
  release: boolean,
  opts: Required<IdempotencyOptions>,
): void {
  const until = Date.now() + opts.windowMs;
  const settle = () => (release ? releaseClaim(db, request) : storeAnswer(db, request, response));
  const log = { userId: request.userId, idempotencyKey: request.key, method: request.method, path: request.path, status: response.status };
  void (async () => {
    for (let attempt = 0; Date.now() < until; attempt += 1) {
      await renewClaim(db, request, opts.leaseMs).catch(() => undefined);
      const settled = await settle().catch(() => undefined);
      if (settled === false) logClaimLost(logger, request, response.status, release ? 'the key was not released' : 'its answer was not stored');
      if (settled === true) logger.warn(log, release ? 'Idempotency-Key released after its answer could not be stored' : 'Idempotency-Key answer stored late');
      if (settled !== undefined) return;
      const pause = Math.min(settleRetryPausesMs[Math.min(attempt, settleRetryPausesMs.length - 1)]!, Math.floor(opts.leaseMs / 3));
      await sleep(pause, undefined, { ref: false });
    }
    logger.error(log, 'Idempotency-Key answer never stored within the key\'s window');
  })();
}

/**
 * Gives the key back (a 5xx or crash is not stored, so the client may retry), unless another claim holds it now; with
 * `keepMade`, not when the request made something (`releaseUnlessMade`: kept claimed, its lease ended).
 */
async function release(db: Db, logger: Logger, request: ClaimedRequest, status: number, keepMade = false): Promise<void> {
  const released = await (keepMade ? releaseUnlessMade : releaseClaim)(db, request).catch(() => undefined);
  if (released === false) logClaimLost(logger, request, status, 'the key was not released');
}

/**
 * The request ran past its lease without renewing it and an identical request took the key over: both executed.
 * The row stays the new claim's (its answer is the one replayed); this one's answer went to its own client only.
 */
function logClaimLost(logger: Logger, request: ClaimedRequest, status: number, consequence: string): void {
  logger.warn(
    { userId: request.userId, idempotencyKey: request.key, method: request.method, path: request.path, status },
    `Idempotency-Key claim lost to a takeover after its lease ran out; ${consequence}`,
  );
}

/**
 * Refusals that hold only until something outside the request changes: the account is reconnected (409
 * `comment_permission_required`), the post is published or the attempt in flight ends (409
 * `first_comment_not_retryable`). Replaying them for 24 hours would refuse the same request after it could pass.
 */
const passingRefusals: ReadonlySet<string> = new Set(['comment_permission_required', 'first_comment_not_retryable']);

/**
 * Errors that report a change made, not a request refused: 502 `thread_rollback_incomplete` leaves published parts
 * live, and "retrying without deleting them publishes them twice" (publishing-api.md). A retry with the same key is
 * exactly that retry, so it gets the original answer replayed, though it is a 5xx.
 */
const changedRefusals: ReadonlySet<string> = new Set(['thread_rollback_incomplete']);

/** Whether this 5xx code is stored and replayed (`changedRefusals`): the OpenAPI document declares `Idempotent-Replay` on it. */
export function replayedDespite5xx(code: string): boolean {
  return changedRefusals.has(code);
}

/**
 * Whether a refusal the handler threw is stored and replayed for the key's 24 hours: one the same request would get
 * again, and every one of `changedRefusals`. Not another 5xx (the client may retry), and not one that says "not
 * now": naming a wait (`Retry-After`), any 429 (a rate, a monthly quota, an account limit: time or an upgrade lifts
 * them), any 402 (the plan or its allowance),
 * `passingRefusals`, and every `PassingRefusal`: the 404 of an account switched off or disconnected
 * (`AccountNotActiveError`: switching it on or reconnecting it lets the request through; an absent account's 404, the
 * same code, is kept) and the 400 of the 5-minute spacing (the other post may move or go). (Stripe, likewise,
 * saves no result of a request that conflicted with a concurrent one.) Handlers refuse by throwing `ApiError`; what
 * they return is a success, always stored.
 */
function keptForReplay(refusal: ApiError): boolean {
  if (changedRefusals.has(refusal.code)) return true;
  if (refusal.status >= 500 || refusal.status === 429 || refusal.status === 402) return false;
  if (Object.keys(refusal.headers).some((name) => name.toLowerCase() === 'retry-after')) return false;
  return !passingRefusals.has(refusal.code) && !(refusal instanceof PassingRefusal);
}
