import { sql, type Kysely } from 'kysely';

/**
 * A threads or instagram link that could not be read at publish time is asked for once more by a later
 * `GET /api/v1/posts/{id}` (publishing-api.md "platform_post_url shapes"); one the platform answered it does not have
 * (a story, copyright-flagged media) is never asked for. The flag tells the two apart; the answer that fills the
 * link clears it. Published rows from before it with no link were asked on every GET: each is asked once more.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table posts add column platform_post_url_unread boolean not null default false`.execute(db);
  await sql`
    update posts set platform_post_url_unread = true
    where status = 'published' and platform in ('threads', 'instagram') and platform_post_url is null and platform_post_id is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table posts drop column platform_post_url_unread`.execute(db);
}
