import type { Db } from '../db';
import { capabilities } from '../platforms/capabilities';
import type { PlatformSlug } from '../platforms/types';
import { threadPartPlatformIds } from './repository';

/**
 * The published parts of the reply-chain thread `post` is a part of, first part first, or null outside one. Such a
 * part's comments are listed through the first part (`CommentRead.thread`): x files every part's replies under the
 * first part's conversation, and a later part's own id finds none. The comment sync and the reply's look both read so.
 */
export async function threadPartsOf(db: Db, post: { thread_id: string | null; platform: PlatformSlug }): Promise<string[] | null> {
  if (post.thread_id === null || !capabilities[post.platform].nativeThreads) return null;
  const parts = await threadPartPlatformIds(db, post.thread_id);
  return parts.length < 2 ? null : parts;
}
