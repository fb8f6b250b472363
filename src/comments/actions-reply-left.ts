import { sql } from 'kysely';
import { ApiError } from '../errors';
import { chargedBefore, refundQuota } from '../quota/quota';
import type { CommentActionsRuntime } from './actions';
import { findUnrecordedReply, recordFoundReply, recordReply } from './actions-reply';
import { loadCommentTarget } from './actions-target';

/**
 * A reply attempt still `reserved` this long after it started has no request left to settle it: its process stopped
 * between the reservation and the spend or refund (a request's platform call gives up long before this).
 */
const REPLY_LEFT_AFTER_MS = 15 * 60_000;
/** One that could not be looked for (the platform failing) this long is refunded unlooked: nothing is charged. */
const REPLY_GIVEN_UP_AFTER_MS = 24 * 3_600_000;
/**
 * After a look that could not tell, the next waits this long, doubling with each such look up to `LOOK_WAIT_MAX_MS`
 * (2, 4, 8, 16, 32 minutes, then hourly: about 28 looks in the day, where it looked every minute, up to 10 listing
 * calls each, against the platform's rate limit).
 */
const LOOK_WAIT_FIRST_MS = 2 * 60_000;
const LOOK_WAIT_MAX_MS = 60 * 60_000;

/** The wait after the `looks`-th look that could not tell. */
export function nextLookWaitMs(looks: number): number {
  return Math.min(LOOK_WAIT_FIRST_MS * 2 ** Math.max(0, Math.min(looks - 1, 20)), LOOK_WAIT_MAX_MS);
}

interface SettleResult {
  spent: number;
  refunded: number;
  /** Left for the next look: the platform could not be asked. */
  failed: number;
}

/**
 * Settles comment replies whose process stopped mid-call (publishing-api.md: a failed post is never charged; a
 * reservation naming no post is otherwise held for ever), and those whose request answered 502 unable to tell
 * (`untold_at`: their reservation was returned then; found, the reply is charged now, `recordFoundReply`). For each
 * attempt still reserved (or untold) `REPLY_LEFT_AFTER_MS` after it started, the reply is looked for on the platform
 * as a keyed retry looks for it (`findUnrecordedReply`): found, it is recorded and charged as the request would have
 * (`recordReply`); not there, or its post, comment or account gone, the reservation is refunded (an untold attempt's
 * mark goes). A keyed retry racing this look settles the same reservation at most
 * once (spend and refund only change a reservation still reserved). Attempts already settled are removed first.
 */
export async function settleLeftReplies(rt: CommentActionsRuntime, signal?: AbortSignal): Promise<SettleResult> {
  await rt.db
    .deleteFrom('reply_attempts')
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('quota_reservations').select(sql`1`.as('one')).whereRef('quota_reservations.post_id', '=', 'reply_attempts.charge_id').where('quota_reservations.state', '=', 'reserved'))),
    )
    // One whose request answered 502 unable to tell holds nothing (its reservation was returned) and is still looked for.
    .where('untold_at', 'is', null)
    .execute();
  // Against the database's clock, which wrote `started_at` (a process's clock may differ, or be a test's).
  const left = await rt.db
    .selectFrom('reply_attempts')
    .selectAll()
    .select(sql<boolean>`started_at < now() - ${`${REPLY_GIVEN_UP_AFTER_MS} milliseconds`}::interval`.as('given_up'))
    .where('started_at', '<', sql<Date>`now() - ${`${REPLY_LEFT_AFTER_MS} milliseconds`}::interval`)
    // Due for a look, or to be given up on (which does not wait for a look's backoff).
    .where(sql<boolean>`(next_look_at is null or next_look_at <= now() or started_at < now() - ${`${REPLY_GIVEN_UP_AFTER_MS} milliseconds`}::interval)`)
    .orderBy('started_at')
    .execute();
  const result: SettleResult = { spent: 0, refunded: 0, failed: 0 };
  // Refunded here, an attempt's row goes at the next look (with the settled ones).
  for (const attempt of left) {
    if (signal?.aborted) break;
    // Nothing is charged: a reservation still held is returned; an untold attempt's was returned with its 502, and
    // only its mark goes (a keyed retry that reserved again since cleared the mark: its reservation is its own).
    const chargeNothing = () =>
      attempt.untold_at === null
        ? refundQuota(rt.db, [attempt.charge_id])
        : rt.db.updateTable('reply_attempts').set({ untold_at: null }).where('charge_id', '=', attempt.charge_id).where('untold_at', 'is not', null).execute();
    let target;
    try {
      target = await loadCommentTarget(rt, attempt.user_id, attempt.post_id, attempt.comment_id, 'reply');
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      // Nothing to look on (post, comment or account gone, replies switched off): nothing is charged.
      await chargeNothing();
      result.refunded++;
      continue;
    }
    try {
      // From the attempt's first charge: a keyed retry that reserved again after a refund moved `started_at` on.
      const since = (await chargedBefore(rt.db, attempt.charge_id))?.since ?? attempt.started_at;
      const found = await findUnrecordedReply(rt, target, attempt.text, since);
      if (found && attempt.untold_at === null) await recordReply(rt.db, target, found, attempt.text, attempt.started_at, attempt.charge_id);
      else if (found) {
        const reply = { chargeId: attempt.charge_id, userId: attempt.user_id, text: attempt.text, startedAt: attempt.started_at };
        await recordFoundReply(rt.db, target, found, reply, rt.now());
      } else await chargeNothing();
      result[found ? 'spent' : 'refunded']++;
    } catch (err) {
      if (attempt.given_up) {
        // A day of looks could not tell: nothing is charged (a keyed retry looks again before it sends).
        await chargeNothing();
        result.refunded++;
        rt.logger.warn({ chargeId: attempt.charge_id, commentId: attempt.comment_id }, 'reconcile: gave up looking for a reply whose outcome was not known; nothing charged');
        continue;
      }
      result.failed++;
      const looks = attempt.looks + 1;
      await rt.db
        .updateTable('reply_attempts')
        .set({ looks, next_look_at: sql<Date>`now() + ${`${nextLookWaitMs(looks)} milliseconds`}::interval` })
        .where('charge_id', '=', attempt.charge_id)
        .execute();
      rt.logger.error({ err, chargeId: attempt.charge_id, commentId: attempt.comment_id, looks }, 'reconcile: could not look for a reply left reserved');
    }
  }
  return result;
}
