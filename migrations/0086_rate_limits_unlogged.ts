import { type Kysely, sql } from 'kysely';

/**
 * The burst limiter's counters (migration 0004) become UNLOGGED: every authenticated request updates its key's row,
 * and on a logged table each of those updates was a WAL record and a commit waiting for its flush, on reads too.
 * An unlogged table writes no WAL for its rows and its transactions do not wait for a flush; it is still one table
 * every API process reads and writes under row locks, so the limit still holds across processes. What it gives up:
 * after a crash of PostgreSQL (not a clean restart) the table comes back empty, i.e. every key starts a fresh
 * 60-second window, and replicas do not see it. Both are acceptable for a per-minute burst counter.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table rate_limits set unlogged`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table rate_limits set logged`.execute(db);
}
