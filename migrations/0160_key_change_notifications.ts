import { sql, type Kysely } from 'kysely';

/**
 * What an API process caches about a key (`src/auth/key-cache.ts`: the key's row and its owner's plan) is announced
 * on `herald_key_changes` when it changes, delivered when the change commits: `key:<id>` when a key is revoked,
 * deleted, rescoped or given a new expiry (writing `last_used_at` alone says nothing), `user:<id>` when a user's plan
 * changes. Every process listening drops that key's row (or that user's keys) at once, so it can keep rows longer
 * than the 2 s that bounded revocation across processes. Triggers, so no writer (`herald keys revoke`, an operator's
 * SQL) can forget it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function herald_notify_key_change() returns trigger language plpgsql as $$
    begin
      if tg_table_name = 'users' then
        perform pg_notify('herald_key_changes', 'user:' || new.id::text);
      else
        perform pg_notify('herald_key_changes', 'key:' || old.id::text);
      end if;
      return null;
    end
    $$`.execute(db);
  await sql`
    create trigger api_keys_notify_change after update on api_keys for each row
    when (row(old.user_id, old.prefix, old.key_hash, old.scopes, old.expires_at, old.revoked_at)
          is distinct from row(new.user_id, new.prefix, new.key_hash, new.scopes, new.expires_at, new.revoked_at))
    execute function herald_notify_key_change()`.execute(db);
  await sql`create trigger api_keys_notify_delete after delete on api_keys for each row execute function herald_notify_key_change()`.execute(db);
  await sql`
    create trigger users_notify_plan_change after update on users for each row
    when (old.plan is distinct from new.plan)
    execute function herald_notify_key_change()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger users_notify_plan_change on users`.execute(db);
  await sql`drop trigger api_keys_notify_delete on api_keys`.execute(db);
  await sql`drop trigger api_keys_notify_change on api_keys`.execute(db);
  await sql`drop function herald_notify_key_change()`.execute(db);
}
