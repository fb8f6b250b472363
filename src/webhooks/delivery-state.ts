import { sql, type Transaction } from 'kysely';
import type { Database, Db } from '../db';
import type { EventRow } from '../db/tables/events';

/**
 * What one delivery attempt changes, in one transaction: the attempt's row, the endpoint's state (a success
 * ends its failing run; a 410 disables it; a failing run of five days disables it, with `disabled_reason`), and,
 * for a dispatched delivery, its `webhook_dispatches` row (attempts made and when the next is due, or settled).
 * `at` is the attempt's time as the delivery workflow saw it (durable timers, not the database clock).
 */

const failingRunLimitMs = 5 * 24 * 60 * 60 * 1000;

interface AttemptRecord {
  endpointId: string;
  eventId: string;
  at: Date;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  /** The dispatched delivery's progress: this attempt's index and the wait before the next (null: the last). */
  dispatch?: { attempt: number; retryInMs: number | null };
}

export type AttemptVerdict = 'delivered' | 'failed' | 'disabled';

export async function recordAttempt(db: Db, attempt: AttemptRecord): Promise<AttemptVerdict> {
  const delivered = attempt.statusCode !== null && attempt.statusCode >= 200 && attempt.statusCode < 300;
  return db.transaction().execute(async (trx) => {
    const verdict = await recordVerdict(trx, attempt, delivered);
    const { dispatch } = attempt;
    if (!dispatch) return verdict;
    if (verdict !== 'failed' || dispatch.retryInMs === null) await settleDispatch(trx, attempt.eventId, attempt.endpointId);
    else {
      await trx
        .updateTable('webhook_dispatches')
        .set({ attempts: dispatch.attempt + 1, next_attempt_at: new Date(attempt.at.getTime() + dispatch.retryInMs) })
        .where('event_id', '=', attempt.eventId)
        .where('endpoint_id', '=', attempt.endpointId)
        .where('settled_at', 'is', null)
        .execute();
    }
    return verdict;
  });
}

async function recordVerdict(trx: Transaction<Database>, attempt: AttemptRecord, delivered: boolean): Promise<AttemptVerdict> {
  await trx
    .insertInto('webhook_deliveries')
    .values({
      endpoint_id: attempt.endpointId,
      event_id: attempt.eventId,
      attempted_at: attempt.at,
      status_code: attempt.statusCode,
      error: attempt.error,
      duration_ms: attempt.durationMs,
      delivered,
    })
    .execute();
  if (delivered) {
    await trx.updateTable('webhook_endpoints').set({ failing_since: null }).where('id', '=', attempt.endpointId).execute();
    return 'delivered';
  }
  const endpoint = await trx
    .updateTable('webhook_endpoints')
    .set({ failing_since: sql`coalesce(failing_since, ${attempt.at})` })
    .where('id', '=', attempt.endpointId)
    .returning(['failing_since', 'enabled'])
    .executeTakeFirst();
  if (!endpoint) return 'disabled';
  const reason =
    attempt.statusCode === 410
      ? 'The endpoint answered 410 Gone'
      : attempt.at.getTime() - endpoint.failing_since!.getTime() >= failingRunLimitMs
        ? 'Every delivery failed for 5 days'
        : null;
  if (reason === null) return 'failed';
  await trx
    .updateTable('webhook_endpoints')
    .set({ enabled: false, disabled_reason: reason, updated_at: sql`now()` })
    .where('id', '=', attempt.endpointId)
    .where('enabled', '=', true)
    .execute();
  return 'disabled';
}

/** The delivery needs no more attempts (delivered, disabled, given up, or nothing left to deliver). */
export async function settleDispatch(db: Db | Transaction<Database>, eventId: string, endpointId: string): Promise<void> {
  await db
    .updateTable('webhook_dispatches')
    .set({ settled_at: sql`now()` })
    .where('event_id', '=', eventId)
    .where('endpoint_id', '=', endpointId)
    .where('settled_at', 'is', null)
    .execute();
}

/** Where a dispatched delivery stands; undefined when it is settled or was never dispatched (a redelivery, a test). */
export async function pendingDispatch(db: Db, eventId: string, endpointId: string): Promise<{ attempts: number; nextAttemptAt: Date } | undefined> {
  const row = await db
    .selectFrom('webhook_dispatches')
    .select(['attempts', 'next_attempt_at'])
    .where('event_id', '=', eventId)
    .where('endpoint_id', '=', endpointId)
    .where('settled_at', 'is', null)
    .executeTakeFirst();
  return row && { attempts: row.attempts, nextAttemptAt: row.next_attempt_at };
}

/** The endpoint's `webhook.test` event whose delivery is not settled yet (still being tried), if any. */
export async function testInFlight(db: Db | Transaction<Database>, endpointId: string): Promise<EventRow | undefined> {
  return db
    .selectFrom('webhook_dispatches')
    .innerJoin('events', 'events.id', 'webhook_dispatches.event_id')
    .selectAll('events')
    .where('webhook_dispatches.endpoint_id', '=', endpointId)
    .where('webhook_dispatches.settled_at', 'is', null)
    .where('events.type', '=', 'webhook.test')
    .orderBy('events.id', 'desc')
    .limit(1)
    .executeTakeFirst();
}
