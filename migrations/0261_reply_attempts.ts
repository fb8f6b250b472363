import { sql, type Kysely } from 'kysely';

/**
 * `reply_attempts`: what a comment reply's quota reservation charges (a reply is not a post row, so the reservation
 * names only the attempt's id). Written with the reservation, it lets the reconciler settle a reservation whose
 * process stopped between it and the spend or refund: it looks for the reply on the platform and spends or refunds
 * (`settleLeftReplies`). Rows whose reservation is settled are removed by that same look; no index besides the key.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('reply_attempts')
    .addColumn('charge_id', 'uuid', (c) => c.primaryKey())
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('post_id', 'uuid', (c) => c.notNull())
    .addColumn('comment_id', 'uuid', (c) => c.notNull())
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('started_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('reply_attempts').execute();
}
