import { sql } from 'kysely';
import type { Db } from '../db';
import type { Logger } from '../logger';

/** Events and delivery attempts are kept 30 days (decisions.md "Events and webhooks"). */
const retentionDays = 30;

/**
 * What is older has expired. The cleanup removes it hourly; reads leave it out meanwhile (`repository.ts`), so an
 * expired event is 404 from the moment it expires, not from the next cleanup that succeeds.
 */
export const expiredBefore = sql<Date>`now() - make_interval(days => ${retentionDays})`;

/** Removes what is older than 30 days; returns how many events went (their attempts go with them). */
export async function removeExpiredEvents(db: Db): Promise<number> {
  await db.deleteFrom('webhook_deliveries').where('attempted_at', '<', expiredBefore).execute();
  const removed = await db.deleteFrom('events').where('created_at', '<', expiredBefore).executeTakeFirst();
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
