import { sql, type Transaction } from 'kysely';
import type { AccountInactiveReason } from '../accounts/lifecycle';
import type { Database } from '../db';
import { idsOrNone } from '../db/uuid';
import { failPendingCommentColumns, firstCommentNotSent } from '../posts/first-comment-not-sent';
import { mayBeLiveAccountEnded } from '../posts/publish-outcome';
import { refundQuota } from '../quota/quota';
import { loadThreadParts } from './reads';
import { recordThreadEvent } from './thread-events';

/**
 * The scheduled threads an account's end (`reason`: switched off, disconnected, its credential refused) meets with a
 * part whose attempt never reported back (its mark open: a first part whose look a failing renewal stopped, waiting
 * for the renewal): that part may be live, and the attempt that would have looked will not come. A thread is one
 * outcome (publishing-api.md "Post status" rule 2), so the whole thread is `failed`, not cancelled (`deleted` with a
 * cancellation value says it never went out): every part with the posts' sentence naming the part
 * (`mayBeLiveAccountEnded`), marks closed, first comment failed, refunded, one `thread.failed`. The posts' own rule
 * is `failMayBeLive` (`src/posts/removals.ts`), which leaves thread parts to this one; both run in the transaction
 * of the account's cancellation (`cancelScheduled`), before it, so it no longer finds these parts `scheduled`.
 * Each thread's parts are locked in part order first, as its claim locks them (`claimThread`), so the two never
 * deadlock and a thread claimed meanwhile is left to its attempt (which finds the account off and fails it so:
 * `mayBeLiveWithAccountOff`). Returns the parts failed.
 */
export async function failThreadsMayBeLive(trx: Transaction<Database>, target: { postIds?: readonly string[]; accountId?: string; reason: AccountInactiveReason }): Promise<string[]> {
  let open = trx
    .selectFrom('posts')
    .select('thread_id')
    .distinct()
    .where('thread_id', 'is not', null)
    .where('status', '=', 'scheduled')
    .where('publish_attempt_started_at', 'is not', null);
  if (target.postIds) open = open.where('id', 'in', idsOrNone(target.postIds));
  if (target.accountId) open = open.where('account_id', '=', target.accountId);
  const threadIds = (await open.orderBy('thread_id').execute()).map((r) => r.thread_id!);
  const failed: string[] = [];
  for (const threadId of threadIds) {
    const parts = await loadThreadParts(trx, threadId, { lock: true });
    const mayBeLive = parts.find((part) => part.status === 'scheduled' && part.publish_attempt_started_at !== null);
    if (!mayBeLive) continue;
    const ids = (
      await trx
        .updateTable('posts')
        .set({
          status: 'failed',
          error_message: mayBeLiveAccountEnded(target.reason, `part ${mayBeLive.thread_order} of this thread`),
          publish_attempt_started_at: null,
          next_attempt_at: null,
          ...failPendingCommentColumns(firstCommentNotSent.notPublished),
          updated_at: sql`now()`,
        })
        .where('thread_id', '=', threadId)
        .where('status', '=', 'scheduled')
        .returning('id')
        .execute()
    ).map((r) => r.id);
    await refundQuota(trx, ids);
    if (ids.length > 0) await recordThreadEvent(trx, 'thread.failed', threadId);
    failed.push(...ids);
  }
  return failed;
}
