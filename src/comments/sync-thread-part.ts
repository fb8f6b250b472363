import type { Db } from '../db';
import type { PostRow } from '../db/tables/posts';
import type { Logger } from '../logger';
import type { PlatformAdapters } from '../platforms/registry';
import { COMMENT_PARENTS_PER_CALL, isPlatformFailure, type PlatformContext } from '../platforms/types';
import { removeCommentsOfOtherParts, storedCommentPlatformIds, storedOnOtherParts, toRefreshed, upsertRefreshedComments } from './sync-repository';
import { threadPartsOf } from './thread-listing';
import { ThreadPartComments } from './thread-part-comments';

/**
 * The thread side of one comment refresh (`sync.ts`): a part of a reply-chain thread lists through the first part and
 * sorts what it reads by part (`ThreadPartComments`); after a complete read, what waited for a parent that never came
 * is settled here.
 */

/**
 * Lookups by id a complete read of a part makes at most for the ancestors of replies it cannot place (each up to
 * `COMMENT_PARENTS_PER_CALL` ids; on x each call also includes what the looked-up tweets answer, two levels a call).
 */
const MAX_ANCESTOR_LOOKUPS = 5;

/** A part of a reply-chain thread: its listing is sorted by part (`ThreadPartComments`). */
interface ThreadPartRead {
  listing: { rootPlatformPostId: string };
  comments: ThreadPartComments;
}

type PartPost = PostRow & { platform_post_id: string };

export async function threadPartRead(db: Db, post: PartPost): Promise<ThreadPartRead | null> {
  const parts = await threadPartsOf(db, post);
  if (!parts) return null;
  return { listing: { rootPlatformPostId: parts[0]! }, comments: new ThreadPartComments(post.platform_post_id, new Set(parts)) };
}

interface SettleDeps {
  db: Db;
  logger: Logger;
  adapters: PlatformAdapters;
}

/**
 * After a thread part's complete read: what waited for a parent that never came, if stored before, or placed through
 * its missing ancestors looked up by id (`placeByLookups`); on the first part, what no chain places
 * (`ThreadPartComments.unplaced`); what is another part's, out. `beforeCall`: before each platform call (the
 * refresh's heartbeat and claim); false when the refresh's time ran out, which ends the lookups.
 */
export async function settleThreadPart(
  deps: SettleDeps,
  post: PartPost,
  ctx: PlatformContext,
  thread: ThreadPartRead,
  now: Date,
  beforeCall: () => Promise<boolean>,
): Promise<void> {
  const stored = await storedCommentPlatformIds(deps.db, post.id);
  const kept = thread.comments.leftOver(stored);
  const elsewhere = await storedOnOtherParts(deps.db, post.thread_id!, post.id, thread.comments.waitingIds());
  kept.push(...(await placeByLookups(deps, post, ctx, thread.comments, stored, elsewhere, beforeCall)));
  if (thread.listing.rootPlatformPostId === post.platform_post_id) kept.push(...thread.comments.unplaced(elsewhere));
  await upsertRefreshedComments(deps.db, post, kept.map(toRefreshed), now);
  await removeCommentsOfOtherParts(deps.db, post.id, thread.comments.elsewhere().filter((id) => stored.has(id)));
}

/**
 * Replies still waiting whose chain the read's links do not lead to a part: their missing ancestors are looked up by
 * id (x: `GET /2/tweets?ids=`, which reaches past recent search's 7 days), one call a level, at most
 * `MAX_ANCESTOR_LOOKUPS`; what the links then lead here is kept. A reply whose parent and grandparent were both past
 * the 7 days and never stored went to the first part whatever it answered. A failed lookup ends the lookups (logged):
 * what stays unplaced goes to the first part, as before. The tweets looked up are neither stored nor counted against
 * the x read allowance (rule 8 counts the replies a refresh returns; these are only where they hang), as the
 * search's included parents are not.
 */
async function placeByLookups(
  deps: SettleDeps,
  post: PartPost,
  ctx: PlatformContext,
  comments: ThreadPartComments,
  stored: ReadonlySet<string>,
  elsewhere: ReadonlySet<string>,
  beforeCall: () => Promise<boolean>,
) {
  const lookUp = deps.adapters[post.platform].commentParents;
  const taken = [];
  for (let call = 0; lookUp && call < MAX_ANCESTOR_LOOKUPS; call++) {
    const ids = comments.unknownAncestors(elsewhere).slice(0, COMMENT_PARENTS_PER_CALL);
    if (ids.length === 0 || !(await beforeCall())) break;
    comments.markAsked(ids);
    try {
      comments.learn(await lookUp(ctx, ids));
    } catch (err) {
      if (!isPlatformFailure(err)) throw err;
      deps.logger.warn({ err, postId: post.id, ids: ids.length }, 'comment refresh: could not look up where thread replies hang; left to the first part');
      break;
    }
    taken.push(...comments.leftOver(stored));
  }
  return taken;
}
