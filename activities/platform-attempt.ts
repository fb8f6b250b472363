import { ApiError } from '../src/errors';
import { platformName } from '../src/platforms/availability';
import { CredentialRenewalPending } from '../src/posts/accounts-port';
import { refusalFromFailure, refusalOf, unconfirmedPastRepeatGuard, type Refusal } from '../src/posts/publish-outcome';
import * as attemptMarks from '../src/posts/attempt-marks';
import * as attemptOutcomes from '../src/posts/attempt-outcomes';
import { publishRequestFor } from '../src/posts/publish-request';
import type { PostsRuntime } from '../src/posts/runtime';
import { sendStopOfActivity } from './send-stop';
import { isPlatformFailure, PlatformFailure, type AttemptHandle, type PlatformContext, type PublishedPost, type PublishRequest } from '../src/platforms/types';

/**
 * One create on the platform for a row whose attempt is marked (`beginPublishAttempt`, a claim): what a post's
 * attempt and a thread part's share. An earlier mark still open means an earlier call never reported back (its
 * activity ran again after a lost workflow task or worker): the platform is asked first where it can be, a platform
 * whose repeated creates are safe (`repeatedCreatesSafeForMs`) is sent to again while they are (`repeatStillGuarded`),
 * and anywhere else the outcome is unknown, never a second send.
 * A refusal clears the mark (nothing is live, so the next attempt need not look first), except an unknown outcome and
 * a server error to a create that may have made the post (`mayHaveTakenEffect`). A look that fails leaves the
 * outcome unknown and the mark open. Anything that is not a platform's answer throws.
 */
export async function sendMarked(
  rt: PostsRuntime,
  row: attemptMarks.MarkedPost,
  ctx: PlatformContext,
  request: PublishRequest,
): Promise<{ published: PublishedPost } | { refusal: Refusal & { awaitingCredential?: boolean } }> {
  const adapter = rt.adapters[row.platform];
  let lookingFirst = false;
  // The activity's stop (`PublishRequest.signal`): no create begins once its time is nearly up (README "Posts").
  const signal = request.signal ?? sendStopOfActivity(rt.sendLimits);
  const sent: PublishRequest = { ...request, attempt: attemptHandleOf(rt, row), ...(row.earlier_attempt_open ? earlierAttemptOf(row) : {}), ...(signal ? { signal } : {}) };
  try {
    if (row.earlier_attempt_open && !adapter.findPublished) {
      const guardMs = adapter.repeatedCreatesSafeForMs;
      if (guardMs === undefined) return { refusal: refusalOf(row.platform, 'unknown_outcome') };
      if (!repeatStillGuarded(guardMs, row)) return { refusal: unconfirmedPastRepeatGuard(row.platform, guardMs) };
    }
    lookingFirst = Boolean(row.earlier_attempt_open && adapter.findPublished);
    const found = lookingFirst ? await adapter.findPublished!(ctx, sent) : null;
    lookingFirst = false;
    return { published: found ?? (await adapter.publish(ctx, sent)) };
  } catch (caught) {
    if (!isPlatformFailure(caught)) throw caught;
    // A failed look leaves the earlier call's outcome unknown, whatever the look ran into (the rule of `lookedUp`,
    // src/platforms/lookup.ts). Only a credential being renewed passes as itself: it stopped the look before it asked.
    const err = lookingFirst && !(caught instanceof CredentialRenewalPending) ? new PlatformFailure(row.platform, 'unknown_outcome', '', undefined, caught.detail) : caught;
    rt.logger.warn({ postId: row.id, threadId: row.thread_id ?? undefined, platform: row.platform, kind: err.kind, detail: err.detail }, 'platform refused a post');
    if (err.kind !== 'unknown_outcome' && !err.mayHaveTakenEffect && !lookingFirst) await attemptOutcomes.clearPublishAttempt(rt.db, row.id);
    const refusal = refusalFromFailure(row.platform, err);
    return { refusal: err instanceof CredentialRenewalPending ? { ...refusal, awaitingCredential: true } : refusal };
  }
}

/**
 * Whether a repeat sent now still falls within the platform's guard against a second copy (`guardMs`,
 * `PlatformAdapter.repeatedCreatesSafeForMs`: Mastodon's key lasts an hour from the status it made, which is no
 * earlier than the earliest call still open, `publish_attempt_first_at`): this call may take `CALL_IN_FLIGHT_MS` to
 * arrive (media uploads first). Both times are the database's (the mark's statement wrote this attempt's start). A
 * repeat the guard may no longer cover could make a second post, so it is not sent (README "Posts").
 */
function repeatStillGuarded(guardMs: number, row: attemptMarks.MarkedPost): boolean {
  const now = row.publish_attempt_started_at;
  const first = row.publish_attempt_first_at ?? now;
  if (!now || !first) return true;
  return now.getTime() + attemptMarks.CALL_IN_FLIGHT_MS < first.getTime() + guardMs;
}

/** The earlier call a look searches for: open, since the earliest open call's start (`publish_attempt_first_at`). */
function earlierAttemptOf(row: attemptMarks.MarkedPost): Pick<PublishRequest, 'earlierAttemptOpen' | 'earlierAttemptSince'> {
  const since = row.publish_attempt_first_at ?? row.publish_attempt_started_at;
  return { earlierAttemptOpen: true, ...(since ? { earlierAttemptSince: since.getTime() } : {}) };
}

/**
 * The marked row's attempt as the adapter sees it (`AttemptHandle`): the handle an earlier call of it recorded (the
 * mark keeps it only while that call is open) and the write that records a new one. The write moves the marked row's
 * version along with it (`recordAttemptHandle`), so the outcome is still recorded in one statement.
 */
function attemptHandleOf(rt: PostsRuntime, row: attemptMarks.MarkedPost): AttemptHandle {
  return {
    earlier: row.earlier_attempt_open ? row.publish_attempt_handle : null,
    async record(handle) {
      const version = await attemptMarks.recordAttemptHandle(rt.db, row.id, handle, row.row_version);
      if (version !== null) row.row_version = version;
    },
  };
}

/**
 * What the adapter is sent for a marked row, or a refusal when it cannot be built. Nothing was sent by this attempt
 * (the platform call has not begun), so its mark is closed, unless an earlier call's mark was open when it marked:
 * that call may have sent, and the next attempt must still look first. One of its stored files gone (an upload
 * deleted, `DELETE /api/v1/media/:id`, after a create had checked it) is a permanent refusal; anything else (media
 * storage, the database not answering) a retryable one, so the workflow retries it as a platform's transient fault
 * rather than failing with the mark left open (a later attempt then looked first, or reported unconfirmed, for a post
 * never sent).
 */
export async function requestOrRefusal(rt: PostsRuntime, row: attemptMarks.MarkedPost): Promise<{ request: PublishRequest } | { refusal: Refusal }> {
  try {
    return { request: await publishRequestFor(rt, row) };
  } catch (err) {
    const mediaGone = err instanceof ApiError && err.code === 'media_not_found';
    if (!mediaGone) rt.logger.warn({ err, postId: row.id, threadId: row.thread_id ?? undefined }, 'the request for a post could not be built; nothing was sent');
    if (!row.earlier_attempt_open) {
      // Left open when the clear fails too: the next attempt then looks first, as after any call that did not report.
      await attemptOutcomes.clearPublishAttempt(rt.db, row.id).catch((clearErr: unknown) => rt.logger.warn({ err: clearErr, postId: row.id }, 'could not close the attempt of a post never sent'));
    }
    if (mediaGone) return { refusal: refusalOf(row.platform, 'permanent', 'A media file of this post was deleted before it was published; nothing was sent.') };
    return { refusal: refusalOf(row.platform, 'retryable', `Herald could not prepare the post for ${platformName(row.platform)} (its media or its database did not answer); nothing was sent.`) };
  }
}
