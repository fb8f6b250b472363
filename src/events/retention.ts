import { sql } from 'kysely';
import type { Db } from '../db';
import type { Logger } from '../logger';

/** Events and delivery attempts are kept 30 days (decisions.md "Events and webhooks"). */
const retentionDays = 30;

/** Removes what is older than 30 days; returns how many events went (their attempts go with them). */
export async function removeExpiredEvents(db: Db): Promise<number> {
  await db.deleteFrom('webhook_deliveries').where('attempted_at', '<', sql<Date>`now() - make_interval(days => ${retentionDays})`).execute();
  const removed = await db.deleteFrom('events').where('created_at', '<', sql<Date>`now() - make_interval(days => ${retentionDays})`).executeTakeFirst();
  return Number(removed.numDeletedRows);
}

/** Runs the cleanup now and every `intervalMs` (hourly) until stopped. */
export function startEventRetention(db: Db, logger: Logger, intervalMs = 3_600_000): { stop(): void } {
  const run = () => {
    removeExpiredEvents(db).catch((err) => logger.error({ err }, 'event cleanup failed'));
  };
  run();
  const timer = setInterval(run, intervalMs);
  return { stop: () => clearInterval(timer) };
}
