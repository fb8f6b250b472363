import { type Kysely, sql } from 'kysely';

/**
 * `herald_refuse(code, message)`: raises an error with that SQLSTATE and message. Plain SQL cannot raise, and a write
 * made of one statement (no BEGIN, no COMMIT) can only refuse by failing: the statement that creates posts and takes
 * their quota (`reserveQuotaWith`) calls it when the request is over a hard limit, so the posts and the counters roll
 * back with it and the caller answers with the same 429 as before. Returns boolean so it can sit in a select list.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create function herald_refuse(code text, message text) returns boolean language plpgsql as $$
    begin
      raise exception using errcode = code, message = message;
    end $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function herald_refuse(text, text)`.execute(db);
}
