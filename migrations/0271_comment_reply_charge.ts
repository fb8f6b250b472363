import type { Kysely } from 'kysely';

/**
 * `comments.reply_charge_id`: the quota charge (a reply attempt's id) that paid for an own comment Herald published as
 * a reply. A platform that deduplicates a repeated reply (Mastodon's Idempotency-Key on the same comment and text)
 * answers with a status Herald may have charged before, by another attempt: this says whether it did, when the
 * answered comment's `reply_comment_id` has moved on to a later reply. Null for refreshed comments, first comments and
 * replies recorded before this column (`recordReply` then falls back on `reply_comment_id`). No index: read by row.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('comments').addColumn('reply_charge_id', 'uuid').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('comments').dropColumn('reply_charge_id').execute();
}
