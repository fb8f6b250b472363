import type { Kysely } from 'kysely';

/**
 * `reply_attempts.looks` and `next_look_at`: the reconciler's looks for a reply left reserved that could not tell
 * whether it went out (the platform failing the look, or the answered comment further down than a look reads). Each
 * such look doubles the wait before the next (`settleLeftReplies`); it looked every minute for a day, up to 10
 * listing calls each time. Null `next_look_at`: not looked at yet. No index: the table holds only unsettled attempts.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('reply_attempts')
    .addColumn('looks', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_look_at', 'timestamptz')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('reply_attempts').dropColumn('looks').dropColumn('next_look_at').execute();
}
