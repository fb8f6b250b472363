import { withinLookupWindow } from '../graph/paging';
import { PlatformFailure, type PublishedPost, type PublishRequest } from '../types';
import { encodeUrn, type LinkedInClient } from './client';
import type { LinkedInDuplicate } from './errors';
import { escapeLittleText, postUrl } from './mapper';

/**
 * Which of the account's posts is a create's, when its answer never came back: by the author finder after a lost
 * answer (`findPagePost`), and by the post a duplicate refusal names (`settleDuplicate`). One rule for both.
 */

/** A post as `GET /rest/posts` (by URN or the author finder) answers it, as far as Herald reads it. */
export interface ReadPost {
  id: string;
  author?: string;
  commentary?: string;
  createdAt?: number;
}

/**
 * `recent`: the request's text as LinkedIn stores it (escaped commentary), made within the lookup window (back to the
 * earliest open call, `withinLookupWindow`), so this attempt's; `older`: the same text made before the window (this
 * account may have posted it by other means); `other`: not this text.
 */
export function matchOfRequest(p: ReadPost, req: PublishRequest, now: Date): 'recent' | 'older' | 'other' {
  if (p.commentary !== escapeLittleText(req.text)) return 'other';
  return withinLookupWindow(new Date(p.createdAt ?? 0).toISOString(), now, req.earlierAttemptSince) ? 'recent' : 'older';
}

/**
 * A duplicate refusal to a retry whose earlier attempt never reported back (`earlierAttemptOpen`): the post LinkedIn
 * names is most likely that attempt's, so it is read (`GET /rest/posts/{urn}`) before anything is said. This
 * author's, with this text, made within the lookup window: it is the post, adopted (published, not sent again).
 * Read 404: the post is gone (LinkedIn refuses a deleted post's text for a while), a refusal saying so. The same text
 * by this author but older, or a read that fails (a member's post needs the restricted `r_member_social`, as the
 * finder does), leave the outcome unknown: never a second send, never a refusal that may be wrong. Any other post
 * LinkedIn names is the plain duplicate refusal.
 */
export async function settleDuplicate(
  at: { client: LinkedInClient; author: string; req: PublishRequest; now: Date },
  duplicate: LinkedInDuplicate,
  refusal: PlatformFailure,
): Promise<PublishedPost> {
  const named = duplicate.urn && /^urn:li:(share|ugcPost):/.test(duplicate.urn) ? duplicate.urn : null;
  const unconfirmed = new PlatformFailure(
    'linkedin',
    'unknown_outcome',
    `LinkedIn refused the post as a duplicate of ${named ? postUrl(named) : 'a post already on this account'}; an earlier attempt may have published it.`,
    undefined,
    refusal.detail,
  );
  if (!named) throw unconfirmed;
  let post: ReadPost;
  try {
    post = (await at.client.send({ method: 'GET', path: `/rest/posts/${encodeUrn(named)}`, action: 'publish' })).json as ReadPost;
  } catch (err) {
    if (err instanceof PlatformFailure && err.kind === 'gone') {
      const gone = "LinkedIn refused the post: it repeats a post of this account that is no longer on LinkedIn (LinkedIn refuses a deleted post's text for a while); nothing is on LinkedIn now.";
      throw new PlatformFailure('linkedin', 'permanent', gone, undefined, refusal.detail);
    }
    throw unconfirmed;
  }
  const match = post?.author === at.author ? matchOfRequest(post, at.req, at.now) : 'other';
  if (match === 'other') throw refusal;
  if (match === 'older') throw unconfirmed;
  return { platformPostId: named, url: postUrl(named) };
}
