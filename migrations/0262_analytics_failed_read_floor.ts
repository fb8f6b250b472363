import { sql, type Kysely } from 'kysely';

/**
 * A failed platform read sets the 5-minute floor (`next_refresh_after`) without numbers (decisions.md "Analytics":
 * a failed read is a platform read), so the floor may now exist without a snapshot; numbers and their sync time still
 * come together, and a snapshot always has its floor.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table post_analytics drop constraint post_analytics_snapshot_complete`.execute(db);
  await sql`alter table post_analytics add constraint post_analytics_snapshot_complete
    check ((metrics is null) = (synced_at is null) and (synced_at is null or next_refresh_after is not null))`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  // Floors of failed reads without numbers go: the next request may read again, as before this migration.
  await sql`update post_analytics set next_refresh_after = null where metrics is null`.execute(db);
  await sql`alter table post_analytics drop constraint post_analytics_snapshot_complete`.execute(db);
  await sql`alter table post_analytics add constraint post_analytics_snapshot_complete
    check ((metrics is null) = (synced_at is null) and (synced_at is null) = (next_refresh_after is null))`.execute(db);
}
