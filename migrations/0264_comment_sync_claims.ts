import { sql, type Kysely } from 'kysely';

/**
 * One refresh of a post's comments at a time (README "Comment listing and sync", 2026-12-07): a refresh claims the
 * post's sync state with a token until `refresh_claimed_until` (the database's clock), renews it per page and clears it
 * when done. A refresh Temporal gave up on may still be running; the next one used to start beside it, both spending
 * a sync and racing their outcome writes. A claim left by a dead worker runs out by itself.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table comment_sync_states add column refresh_claim uuid, add column refresh_claimed_until timestamptz`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table comment_sync_states drop column refresh_claim, drop column refresh_claimed_until`.execute(db);
}
