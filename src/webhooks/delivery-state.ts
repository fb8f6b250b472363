import { sql } from 'kysely';
import type { Db } from '../db';

/**
 * What one delivery attempt changes, in one transaction: the attempt's row, and the endpoint's state (a success
 * ends its failing run; a 410 disables it; a failing run of five days disables it, with `disabled_reason`).
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
}

export type AttemptVerdict = 'delivered' | 'failed' | 'disabled';

export async function recordAttempt(db: Db, attempt: AttemptRecord): Promise<AttemptVerdict> {
  const delivered = attempt.statusCode !== null && attempt.statusCode >= 200 && attempt.statusCode < 300;
  return db.transaction().execute(async (trx) => {
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
  });
}
