import type { Kysely } from 'kysely';

/**
 * `reply_attempts.untold_at`: the reply request answered 502 saying it could not tell whether the reply went out, and
 * returned the attempt's reservation (publishing-api.md: a failed reply changes nothing, reserved quota is returned on
 * any failure). The row stays while the reconciler keeps looking (`settleLeftReplies`): found, the reply is recorded
 * and charged then. It used to keep the reservation, counted in the month's usage, for up to a day. Null: an attempt
 * still holding its reservation (or one the reconciler has not settled yet).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('reply_attempts').addColumn('untold_at', 'timestamptz').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('reply_attempts').dropColumn('untold_at').execute();
}
