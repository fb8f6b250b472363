import { listenForSearchAttributes } from './search-attributes-signal';
import { platformCall, publishNow, publishTakenOver, type PublishPostResult } from './post-steps';

/**
 * An immediate fan-out (publishing-api.md "Fan-out"): every account's post published at once, in parallel, each
 * exactly as an immediate single post is (`publishNow`), the first attempts together in one local activity.
 * Workflow id `group-<groupId>`. One workflow for the whole request rather than one per account: starting and
 * running 25 workflows costs the worker far more than 25 local activities in one (README "Figures"). Scheduled
 * fan-outs keep one `publishPost` per post, since each post is then rescheduled, edited and cancelled on its own.
 */

export interface PublishGroupInput {
  groupId: string;
  postIds: string[];
  /** Quick retries of one post's transient failure (ms), inside the API request. */
  immediateRetryDelaysMs: number[];
  /**
   * Started again by the reconciler for posts a lost run left `publishing`: a call of that run may still be on its
   * way, so each post is claimed first (`publishTakenOver`) as a single post taken over is. Absent from the API's
   * starts (nothing was sent yet) and from runs started before it.
   */
  takenOver?: boolean;
}

/** Each post's outcome, by post id. */
type PublishGroupResult = Record<string, PublishPostResult>;

export async function publishGroup(input: PublishGroupInput): Promise<PublishGroupResult> {
  listenForSearchAttributes();
  if (input.takenOver) {
    const taken = await Promise.all(input.postIds.map((postId) => publishTakenOver(postId, input.immediateRetryDelaysMs)));
    return Object.fromEntries(input.postIds.map((postId, i) => [postId, taken[i]!]));
  }
  // The first attempts go out together in one activity; what follows (retries, first comments) per post.
  const first = await platformCall.publishGroupToPlatforms({ postIds: input.postIds, now: Date.now() });
  const outcomes = await Promise.all(
    input.postIds.map((postId) => {
      const attempt = first[postId];
      return publishNow(postId, input.immediateRetryDelaysMs, attempt && (attempt.ok || attempt.kind !== 'error') ? attempt : undefined);
    }),
  );
  return Object.fromEntries(input.postIds.map((postId, i) => [postId, outcomes[i]!]));
}
