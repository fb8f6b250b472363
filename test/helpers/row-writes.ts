/**
 * Who writes one row while a test watches it: a trigger on the table records every update of the row with the
 * writing session's `application_name` and statement. For counted tests (issue 15's round trips) on the shared test
 * database, where a fallback path is correct when something else wrote the row meanwhile, and the test must tell
 * that case (naming the writer) from a regression.
 *
 *   const watch = await watchRowWrites(db, 'posts', postId);
 *   ...the path...
 *   const writes = await watch.stop();   [{ application_name, query }] in order; the trigger is gone
 */
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';

interface RowWrite {
  application_name: string;
  query: string;
}

export async function watchRowWrites(db: Kysely<any>, table: 'posts' | 'accounts', id: string): Promise<{ stop(): Promise<RowWrite[]> }> {
  const name = sql.id(`row_writes_${randomUUID().replaceAll('-', '')}`);
  const log = sql.id(`row_writes_log_${randomUUID().replaceAll('-', '')}`);
  await sql`create table ${log} (at timestamptz not null default clock_timestamp(), application_name text, query text)`.execute(db);
  await sql`create function ${name}() returns trigger language plpgsql as $$
    begin
      insert into ${log} (application_name, query) values (current_setting('application_name'), current_query());
      return null;
    end $$`.execute(db);
  await sql`create trigger ${name} after update on ${sql.id(table)} for each row when (new.id = ${sql.lit(id)}::uuid) execute function ${name}()`.execute(db);
  return {
    stop: async () => {
      await sql`drop trigger ${name} on ${sql.id(table)}`.execute(db);
      await sql`drop function ${name}()`.execute(db);
      const { rows } = await sql<RowWrite>`select application_name, query from ${log} order by at`.execute(db);
      await sql`drop table ${log}`.execute(db);
      return rows;
    },
  };
}
