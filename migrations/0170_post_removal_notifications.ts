import { sql, type Kysely } from 'kysely';

/**
 * A `publishing` post removed (an immediate thread that failed keeps no rows: `discardThread`) is announced on
 * `herald_post_changes` too, as `<id>:removed:`, delivered when the removal commits. The request waiting for that
 * thread then knows at once that its workflow's result, which says why, is the answer (`src/posts/await-settled.ts`),
 * and a thread that went out whole is answered from the feed alone, with no long poll of its workflow's history.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function herald_notify_post_removal() returns trigger language plpgsql as $$
    begin
      perform pg_notify('herald_post_changes', old.id::text || ':removed:');
      return null;
    end
    $$`.execute(db);
  await sql`
    create trigger posts_notify_removal after delete on posts for each row
    when (old.status = 'publishing')
    execute function herald_notify_post_removal()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger posts_notify_removal on posts`.execute(db);
  await sql`drop function herald_notify_post_removal()`.execute(db);
}
