import { sql, type Kysely } from 'kysely';

/**
 * A fan-out's and a thread's posts are found by `group_id = ...` and `thread_id = ...` only, never by the absence of
 * one (issue 15, index entries per publish). Indexed whole, every post outside a fan-out or a thread wrote a NULL
 * entry into each of the two indexes at its insert, and again at every update that is not HOT (a status change is
 * never HOT: `status` is indexed): for a single immediate post, four of the 16 index entries its insert and its
 * recording write, none of which any query reads. Partial, they hold the posts that have one; a query's `= value`
 * or `in (...)` implies `is not null`, so PostgreSQL uses them for the same lookups, in generic plans too
 * (`test/foundation/read-cost.test.ts`).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`drop index posts_group_idx`.execute(db);
  await sql`create index posts_group_idx on posts (group_id) where group_id is not null`.execute(db);
  await sql`drop index posts_thread_idx`.execute(db);
  await sql`create index posts_thread_idx on posts (thread_id, thread_order) where thread_id is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index posts_thread_idx`.execute(db);
  await sql`create index posts_thread_idx on posts (thread_id, thread_order)`.execute(db);
  await sql`drop index posts_group_idx`.execute(db);
  await sql`create index posts_group_idx on posts (group_id)`.execute(db);
}
