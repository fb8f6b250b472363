import { sql, type Kysely } from 'kysely';

/**
 * `quota_reservations` without the uuid key nothing reads (issue 15, memory per waiting post and index entries per
 * charge). A reservation is found by its post (`quota_reservations_post_idx`) and changed by post, kind and state;
 * its `id` was written by every charge (a `gen_random_uuid()` and an entry in a random-order primary key index, 776 KiB
 * of shared buffers for 10,000 scheduled posts) and read by nothing. The table is rebuilt, not altered: a dropped
 * column stays in every row's null bitmap, which costs a row 8 bytes of header where the uuid cost 16, and the
 * columns go in an order that needs no alignment padding (timestamps first): ~112 → ~96 bytes a row.
 * Without a primary key the table can only be replicated logically with `REPLICA IDENTITY FULL`; Herald does not.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table quota_reservations rename to quota_reservations_keyed`.execute(db);
  await db.schema
    .createTable('quota_reservations')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('post_id', 'uuid', (c) => c.notNull())
    .addColumn('overage', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('month', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull().defaultTo('reserved'))
    .execute();
  await sql`
    insert into quota_reservations (created_at, updated_at, user_id, post_id, overage, month, kind, state)
    select created_at, updated_at, user_id, post_id, overage, month, kind, state from quota_reservations_keyed`.execute(db);
  await db.schema.dropTable('quota_reservations_keyed').execute();
  await sql`alter table quota_reservations add constraint quota_reservations_kind_check check (kind in ('post', 'scheduled', 'first_comment', 'x_link', 'x_link_first_comment'))`.execute(db);
  await sql`alter table quota_reservations add constraint quota_reservations_state_check check (state in ('reserved', 'spent', 'refunded'))`.execute(db);
  await sql`create index quota_reservations_post_idx on quota_reservations (post_id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table quota_reservations add column id uuid not null default gen_random_uuid()`.execute(db);
  await sql`alter table quota_reservations add constraint quota_reservations_pkey primary key (id)`.execute(db);
}
