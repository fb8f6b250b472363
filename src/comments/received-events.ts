import { sql, type Transaction } from 'kysely';
import type { Database, Db } from '../db';
import { inTransaction } from '../db/in-transaction';
import { recordEvents } from '../events/outbox';
import { toCommentView } from './listing-view';

/** `comment.received`: what a post's comment syncs stored, reported once (the `unreported` flags of migration 0200). */

type Executor = Db | Transaction<Database>;

/**
 * How many comments one `comment.received` carries: the first sync of a busy post finds thousands, and the event is
 * kept 30 days and sent on every delivery attempt. The rest are read with the comment listing.
 */
const maxReportedComments = 100;

/**
 * Reports what the post's refreshes stored and no event reported yet (decisions.md "Events and webhooks": one
 * `comment.received` per sync): the newest 100 as the listing shows them, `comment_count` (all of them) and
 * `truncated` (more than the list holds), and clears every flag in the same transaction: a comment is reported once,
 * and one that a refresh stored just before dying is reported by the next. A comment found to be the account's own
 * since it was stored is not "received": its flag is cleared, unreported.
 */
export async function reportReceivedComments(db: Executor, post: { id: string; user_id: string }): Promise<void> {
  await inTransaction(db, async (trx) => {
    // The update's RETURNING has only what sorts and counts; the comments table read beside it is the statement's
    // snapshot, before the flags were cleared, which the view does not show.
    const received = await trx
      .with('reported', (qb) =>
        qb.updateTable('comments').set({ unreported: false }).where('post_id', '=', post.id).where('unreported', '=', true).returning(['id', 'own', 'created_at']),
      )
      .selectFrom('reported')
      .innerJoin('comments', 'comments.id', 'reported.id')
      .selectAll('comments')
      .select(sql<string>`count(*) over ()`.as('received_count'))
      .where('reported.own', '=', false)
      .orderBy('reported.created_at', 'desc')
      .orderBy('reported.id', 'desc')
      .limit(maxReportedComments)
      .execute();
    if (received.length > 0) {
      const count = Number(received[0].received_count);
      const data = { post_id: post.id, comments: received.map(toCommentView), comment_count: count, truncated: count > received.length };
      await recordEvents(trx, [{ userId: post.user_id, type: 'comment.received', data, request: null }]);
    }
  });
}
