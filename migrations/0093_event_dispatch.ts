import { sql, type Kysely } from 'kysely';

/**
 * `events.dispatched_at`: set once the dispatcher has started the event's delivery workflows (one per subscribed
 * endpoint). Events still null are what the dispatcher reads (partial index), so a crash before the mark only means
 * starting them again, which the workflow ids make harmless.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('events').addColumn('dispatched_at', 'timestamptz').execute();
  await sql`create index events_undispatched_idx on events (id) where dispatched_at is null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index events_undispatched_idx`.execute(db);
  await db.schema.alterTable('events').dropColumn('dispatched_at').execute();
}
