import { sql, type Kysely } from 'kysely';

/**
 * `unreported`: a comment a refresh stored that no `comment.received` event has reported yet (decisions.md "Events
 * and webhooks": one event per sync). A refresh stores each page in its own transaction with the flag set, and at its
 * end clears the flags of the post and writes the one event in a single transaction, so a refresh that dies in
 * between leaves them flagged for the next one. The partial index holds only the flagged rows, so that end-of-refresh
 * write reads those and not every stored comment of the post; a comment enters it once, when it is received.
 * Comments stored before this migration were reported as they were stored: none starts flagged.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('comments')
    .addColumn('unreported', 'boolean', (c) => c.notNull().defaultTo(false))
    .execute();
  await sql`create index comments_unreported_idx on comments (post_id) where unreported`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('comments_unreported_idx').execute();
  await db.schema.alterTable('comments').dropColumn('unreported').execute();
}
