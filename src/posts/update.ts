import { randomUUID } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { Database } from '../db';
import type { ReservationKind } from '../db/tables/quota';
import type { NewPostRow, PostRow, StoredMediaRef } from '../db/tables/posts';
import { ApiError } from '../errors';
import { replaceCharges, reserveQuota } from '../quota/quota';
import { chargesOf, runWorkflows } from './create';
import { removeUnusedCopies } from './media-cleanup';
import { findOwnPost, getPostView } from './read';
import { editPost, insertPosts, markPromoted, moveScheduledTime, unmarkFailedPromotion } from './repository';
import { againOnSpacingClash } from './spacing-guard';
import { againOnChangedRow, ChangedSinceRead } from './edit-guard';
import { contentOf, editableOf, planUpdate, type PlannedUpdate } from './update-plan';
import type { OwnPostRow } from './view-queries';
import { publishOutcome } from './respond';
import type { UpdateOutcome } from './outcomes';
import { checkUpdateRequest, type UpdatePostBody, type WarningEntry } from './rules';
import type { PostsRuntime } from './runtime';
import { signalPost } from './workflow-client';
import { promoteDraftThread } from '../threads/promote';
import { lastPartId } from '../threads/reads';
import { signalThread } from '../threads/workflow-client';

/**
 * `PATCH /api/v1/posts/:id` (publishing-api.md "PATCH"): only what is sent changes. A scheduled post or a draft that
 * stays a draft is edited in place (a scheduled post's workflow is told, so a new time moves its timer and new content
 * is what publishes). A draft given `schedule_at` or `publish: true` is promoted: every create rule runs, quota is
 * spent, and a NEW post carries `promoted_from_draft_id`; any refusal leaves the draft unchanged. A draft thread is
 * promoted whole (`src/threads/promote.ts`).
 */
export async function updatePost(rt: PostsRuntime, userId: string, postId: string, body: UpdatePostBody): Promise<UpdateOutcome> {
  // Written only over the row it read: a row written meanwhile (a reschedule, another edit) is read and judged again.
  return againOnChangedRow(async () => {
    const row = await findOwnPost(rt.db, userId, postId);
    const checked = checkUpdateRequest(body, editableOf(row));
    const early = checked.violations[0];
    if (early) throw new ApiError(early.code, early.message);
    // A draft thread is promoted whole (publishing-api.md "States and transitions" rule 3).
    if (row.thread_id !== null && row.status === 'draft' && checked.intent !== 'edit') return promoteDraftThread(rt, userId, row, body);
    // A new time that clashes with a post scheduled at the same moment is judged again from a new read.
    return againOnSpacingClash(() => editOrPromote(rt, userId, row, body));
  });
}

/** The change planned against every rule, then written: in place, or as the post a promoted draft becomes. */
async function editOrPromote(rt: PostsRuntime, userId: string, row: OwnPostRow, body: UpdatePostBody): Promise<UpdateOutcome> {
  if (row.thread_id !== null && body.first_comment !== undefined) {
    const last = await lastPartId(rt.db, row.thread_id);
    if (last !== row.id) return editWithThreadFirstComment(rt, userId, row, await findOwnPost(rt.db, userId, last), body);
  }

  const planned = await planUpdate(rt, userId, row, body);
  try {
    if (planned.promoting) {
      const promoted = await promoteDraft(rt, userId, planned, body);
      if (promoted.kind === 'platform_refused') await rt.mediaStore.deleteDownloadedCopies(planned.downloaded).catch(() => undefined);
      return promoted;
    }
    await editInPlace(rt, userId, planned, body);
  } catch (err) {
    await rt.mediaStore.deleteDownloadedCopies(planned.downloaded).catch(() => undefined);
    throw err;
  }
  return afterEdit(rt, planned, body);
}

/**
 * A scheduled post or a draft changed in place, in one transaction: a new time moves its thread's parts with it and
 * ends a retry's wait (`moveScheduledTime`), and a scheduled post's content-dependent charges (first comment, x links)
 * are replaced by what it now needs.
 */
async function editInPlace(rt: PostsRuntime, userId: string, planned: PlannedUpdate, body: UpdatePostBody): Promise<void> {
  await rt.db.transaction().execute((trx) => writeEdit(trx, userId, planned, body));
}

/** The charges that depend on a post's content (what it says, not that it exists or when): an edit replaces them. */
const contentChargeKinds: readonly ReservationKind[] = ['first_comment', 'x_link', 'x_link_first_comment'];

/** The writes of an edit in place, in the caller's transaction (a thread's first comment shares one with its part's edit). */
async function writeEdit(trx: Transaction<Database>, userId: string, planned: PlannedUpdate, body: UpdatePostBody): Promise<void> {
  const { row, validation } = planned;
  const content = contentOf(planned, body);
  // Anything written since the read (a claim, another edit, a reschedule whose time this would write back): judged again.
  if (!(await editPost(trx, row, content))) throw new ChangedSinceRead();
  if (body.schedule_at !== undefined) {
    await moveScheduledTime(trx, planned.unit, row.status, { scheduled_at: content.scheduled_at, timezone: content.timezone });
  }
  if (row.status === 'scheduled') {
    // Editing is free, but the charges that depend on content follow it: a first comment counts as a post and
    // x links are billed, so those reservations become what the edited post now needs.
    const charges = chargesOf(row.id, { scheduledAt: validation.scheduledAt, xLinkBilled: validation.xLinkBilled, body: validation.body }).filter((c) =>
      contentChargeKinds.includes(c.kind),
    );
    await replaceCharges(trx, row.id, contentChargeKinds, { userId, limits: planned.limits, now: planned.now, charges });
  }
}

/** After an edit: replaced media copies go, the waiting workflow is told, and the post is answered as it now is. */
async function afterEdit(rt: PostsRuntime, planned: PlannedUpdate, body: UpdatePostBody): Promise<UpdateOutcome> {
  await settleEdit(rt, planned);
  return editAnswer(rt, planned.row.id, {
    warnings: planned.staysDraft ? planned.warnings : null,
    moved: body.schedule_at !== undefined ? planned.unit : null,
  });
}

/** A scheduled post edited: the copies of media it no longer uses go, and its waiting workflow is told. */
async function settleEdit(rt: PostsRuntime, planned: PlannedUpdate): Promise<void> {
  const { row } = planned;
  if (row.status !== 'scheduled') return;
  if (planned.mediaChanged) await dropUnusedCopies(rt, row, planned.refs);
  if (row.thread_id !== null) await signalThread(rt, row.thread_id);
  else await signalPost(rt, row.id, planned.validation.rescheduled ? 'reschedule' : 'edit');
}

/** The edited post as it now is: a draft with its `warnings`, a new time with every post it moved. */
async function editAnswer(rt: PostsRuntime, postId: string, extra: { warnings: WarningEntry[] | null; moved: readonly string[] | null }): Promise<UpdateOutcome> {
  const data: Record<string, unknown> = { ...(await getPostView(rt.db, postId)) };
  if (extra.warnings) data.warnings = extra.warnings;
  if (extra.moved) data.rescheduled_post_ids = [...extra.moved].sort();
  return { kind: 'updated', post: data };
}

/**
 * A draft promoted: a NEW post (scheduled, or publishing now) with the quota of a create reserved and the draft marked
 * promoted, in one transaction; then its workflow, answered as a create is. A refusal by the platform unmarks the draft.
 */
async function promoteDraft(rt: PostsRuntime, userId: string, planned: PlannedUpdate, body: UpdatePostBody): Promise<UpdateOutcome> {
  const { row, account, validation } = planned;
  const newRow: NewPostRow & { id: string } = {
    ...contentOf(planned, body),
    id: randomUUID(),
    user_id: userId,
    account_id: account.id,
    platform: account.platform,
    status: validation.intent === 'promote_schedule' ? 'scheduled' : 'publishing',
    scheduled_at: validation.intent === 'promote_schedule' ? validation.scheduledAt : null,
    group_id: row.group_id,
    promoted_from_draft_id: row.id,
  };
  // The quota last: it locks the user's month row, which every publish of this user waits for, until the commit.
  await rt.db.transaction().execute(async (trx) => {
    await insertPosts(trx, [newRow]);
    // Promoted meanwhile, or edited since the read this post was made from: judged again from a new read, which the
    // rules refuse if it was promoted, and which carries the edit if it was edited.
    if (!(await markPromoted(trx, row, newRow.id))) throw new ChangedSinceRead();
    const charges = chargesOf(newRow.id, { scheduledAt: newRow.scheduled_at ?? null, xLinkBilled: validation.xLinkBilled, body: validation.body });
    await reserveQuota(trx, { userId, limits: planned.limits, now: planned.now, charges });
  });
  const { views } = await runWorkflows(rt, [newRow], newRow.status === 'publishing');
  const outcome = await publishOutcome(rt, { created: [{ id: newRow.id, account }], fanOut: false, groupId: null, draft: false, warnings: [], views });
  if (outcome.kind === 'platform_refused') {
    // As for a refused create, the new post stays `failed` (its quota refunded) as the record of the attempt; the
    // draft is as it was, editable and promotable again.
    await unmarkFailedPromotion(rt.db, [row.id]);
    return outcome;
  }
  if (outcome.kind !== 'created') throw new Error('a promoted draft is one post, never a fan-out');
  return { kind: 'updated', post: body.schedule_at !== undefined ? { ...outcome.post, rescheduled_post_ids: [newRow.id] } : { ...outcome.post } };
}

/**
 * A thread's single first comment lives on its last part (it is published under it), so one sent on another part
 * changes the last part, and the rest of the request the named part. Either both apply or neither: each is planned
 * (every rule, the media prepared) before anything is written, then both are written in one transaction. Answered as
 * a PATCH of the named part is, a draft's `warnings` covering both parts.
 */
async function editWithThreadFirstComment(rt: PostsRuntime, userId: string, named: OwnPostRow, last: OwnPostRow, body: UpdatePostBody): Promise<UpdateOutcome> {
  const { first_comment, ...rest } = body;
  // Only the first comment asked (a timezone alone changes nothing): the named part itself does not change, and the
  // timezone is checked with the comment, as a PATCH of the last part checks it.
  const namedChanges = Object.entries(rest).some(([field, value]) => value !== undefined && field !== 'timezone');
  const comment = namedChanges ? { first_comment } : { first_comment, timezone: rest.timezone };
  const onLast = await planUpdate(rt, userId, last, comment);
  const onNamed = namedChanges ? await planUpdate(rt, userId, named, rest) : null;
  try {
    // A promotion of a draft thread took the whole request (`promoteDraftThread`); what is left edits in place.
    if (onLast.promoting || onNamed?.promoting) throw new Error('a thread first comment is written by an edit in place, never by a promotion');
    await rt.db.transaction().execute(async (trx) => {
      // The last part first: its content holds the thread's time as it was, which a move of the named part then replaces.
      await writeEdit(trx, userId, onLast, comment);
      if (onNamed) await writeEdit(trx, userId, onNamed, rest);
    });
  } catch (err) {
    await rt.mediaStore.deleteDownloadedCopies([...onLast.downloaded, ...(onNamed?.downloaded ?? [])]).catch(() => undefined);
    throw err;
  }
  // Both parts are of one thread: one signal tells its workflow of both.
  await settleEdit(rt, onNamed ?? onLast);
  return editAnswer(rt, named.id, {
    warnings: onLast.staysDraft ? distinctWarnings([...(onNamed?.warnings ?? []), ...onLast.warnings]) : null,
    moved: rest.schedule_at !== undefined ? onLast.unit : null,
  });
}

/** The warnings of two parts of one thread, each said once (both tell of the thread's remembered time that has passed). */
function distinctWarnings(warnings: readonly WarningEntry[]): WarningEntry[] {
  const keyOf = (w: WarningEntry) => JSON.stringify([w.account_id, w.code, w.message]);
  return warnings.filter((w, i) => warnings.findIndex((other) => keyOf(other) === keyOf(w)) === i);
}

/** Media replaced on a scheduled post: the copies downloaded for the old list are no longer needed. */
async function dropUnusedCopies(rt: PostsRuntime, row: PostRow, kept: readonly StoredMediaRef[]): Promise<void> {
  const keep = new Set(kept.map((r) => r.media_id));
  const old = (row.media ?? []).map((r) => r.media_id).filter((id): id is string => typeof id === 'string' && !keep.has(id));
  await removeUnusedCopies(rt, old, row.id).catch((err) => rt.logger.warn({ err }, 'could not remove replaced media'));
}
