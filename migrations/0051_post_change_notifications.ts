import { sql, type Kysely } from 'kysely';

/**
 * Every change of a post's `status` or `first_comment_status` is announced on the channel `herald_post_changes`
 * with the payload `<id>:<status>:<first_comment_status or empty>`, delivered when the change commits. An API
 * request waiting for an immediate publish listens there (`src/posts/change-feed.ts`) and answers as soon as the
 * row says the platform answered, instead of waiting for the workflow to close and the result to travel back
 * through Temporal. A trigger, so no writer can forget it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function herald_notify_post_change() returns trigger language plpgsql as $$
    begin
      perform pg_notify('herald_post_changes', new.id::text || ':' || new.status || ':' || coalesce(new.first_comment_status, ''));
      return null;
    end
    $$`.execute(db);
  await sql`
    create trigger posts_notify_change after update on posts for each row
    when (old.status is distinct from new.status or old.first_comment_status is distinct from new.first_comment_status)
    execute function herald_notify_post_change()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger posts_notify_change on posts`.execute(db);
  await sql`drop function herald_notify_post_change()`.execute(db);
}
