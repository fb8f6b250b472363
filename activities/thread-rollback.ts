import { AccountNotConnectedError, loadPlatformContext } from '../src/posts/accounts-port';
import * as attemptOutcomes from '../src/posts/attempt-outcomes';
import { publishRequestFor } from '../src/posts/publish-request';
import { findPost } from '../src/posts/view-queries';
import type { PostsRuntime } from '../src/posts/runtime';
import { capabilities } from '../src/platforms/capabilities';
import { isPlatformFailure, type PlatformContext, type PostLink, type PublishedPost } from '../src/platforms/types';
import type { ReplyTo } from './thread-parts';

/**
 * Where the part a thread stopped at stands, as its rollback finds it (`lookForUnconfirmedPart`):
 * - `absent`: nothing of it is live (no call of it may have sent, or the look found nothing);
 * - `removed`: it had gone out, and was deleted;
 * - `live`: it had gone out, and could not be deleted (or the account cannot delete);
 * - `unknown`: a call of it may have sent and Herald could not look (the platform cannot be searched, the look
 *   failed, the account is gone): it may be live.
 */
export type UnconfirmedPart =
  | { kind: 'absent' }
  | ({ kind: 'removed' | 'live'; platformPostId: string } & PostLink)
  | { kind: 'unknown' };

/**
 * The part a thread stopped at may have gone out while its send went unanswered (a timeout after the create, an
 * activity lost mid-call): its mark is still open (`sendMarked` closes it only for a refusal of a call that sent
 * nothing). The rollback deleted only the parts confirmed, so that part stayed live, replying to a deleted part,
 * while the thread was reported rolled back, and a retry (with new parents) sent it again. Here it is looked for as
 * the retry of that part would look (`findPublished`, replying to the part before it as sent), and deleted when found;
 * one whose outcome cannot be told is reported `unknown`, never taken as absent.
 */
export function createThreadRollback(rt: PostsRuntime) {
  const { db } = rt;

  async function findSent(ctx: PlatformContext, row: NonNullable<Awaited<ReturnType<typeof findPost>>>, replyTo: ReplyTo): Promise<PublishedPost | null | 'unknown'> {
    const adapter = rt.adapters[row.platform];
    if (!adapter.findPublished) return 'unknown';
    try {
      const request = await publishRequestFor(rt, row);
      if (replyTo && capabilities[row.platform].nativeThreads) request.replyTo = replyTo;
      const attempt = { earlier: row.publish_attempt_handle, record: async () => undefined };
      return await adapter.findPublished(ctx, { ...request, earlierAttemptOpen: true, attempt });
    } catch (err) {
      rt.logger.warn({ err, postId: row.id, threadId: row.thread_id }, 'could not look for a thread part whose send was not confirmed');
      return 'unknown';
    }
  }

  return {
    /** The part `postId` (sent replying to `replyTo`) looked for, and deleted when found and `rollbackSupported`. */
    async lookForUnconfirmedPart(input: { postId: string; replyTo: ReplyTo; rollbackSupported: boolean }): Promise<UnconfirmedPart> {
      const row = await findPost(db, input.postId);
      if (!row) return { kind: 'unknown' };
      // Stored: it went out (its store closed the mark). Never marked, or its mark closed by a refusal: nothing was sent.
      if (row.platform_post_id === null && row.publish_attempt_started_at === null) return { kind: 'absent' };
      if (!row.account_id) return { kind: 'unknown' };
      let ctx: PlatformContext;
      try {
        ctx = (await loadPlatformContext(db, rt.sealedBox, row.account_id)).ctx;
      } catch (err) {
        if (err instanceof AccountNotConnectedError) return { kind: 'unknown' };
        throw err;
      }
      const found = row.platform_post_id !== null ? { platformPostId: row.platform_post_id, url: row.platform_post_url } : await findSent(ctx, row, input.replyTo);
      if (found === 'unknown') return { kind: 'unknown' };
      // Looked for and not there, or deleted: nothing of it is live, so its retry sends without looking again.
      if (found === null) {
        await attemptOutcomes.clearPublishAttempt(db, row.id);
        return { kind: 'absent' };
      }
      const link = { platformPostId: found.platformPostId, url: found.url ?? null };
      if (!input.rollbackSupported) return { kind: 'live', ...link };
      try {
        await rt.adapters[row.platform].delete(ctx, found.platformPostId);
      } catch (err) {
        if (!isPlatformFailure(err)) throw err;
        if (err.kind !== 'gone') {
          rt.logger.warn({ postId: row.id, threadId: row.thread_id, platform: row.platform, kind: err.kind, detail: err.detail }, 'platform refused to delete a thread part found after an unconfirmed send');
          return { kind: 'live', ...link };
        }
      }
      await attemptOutcomes.clearPublishAttempt(db, row.id);
      return { kind: 'removed', ...link };
    },
  };
}
