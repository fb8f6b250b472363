import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { NewPostRow, PostRow, StoredMediaRef } from '../db/tables/posts';
import { ApiError } from '../errors';
import { requireAvailablePlatform } from '../platforms/availability';
import { loadLimits, refundQuota, reserveQuota } from '../quota/quota';
import { loadPostingAccounts } from './accounts-port';
import { chargesOf, runWorkflows } from './create';
import { removeUnusedCopies } from './media-cleanup';
import { prepareMedia } from './prepare-media';
import { findOwnPost, getPostView } from './read';
import { publishOutcomeResponse } from './respond';
import type { RouteResult } from './route-result';
import { checkUpdateRequest, mediaSelectionOf, validateUpdateRequest, type AccountBody, type MediaRef, type UpdatePostBody } from './rules';
import type { PostsRuntime } from './runtime';
import { scheduledTimesOf } from './schedule-times';
import { signalPost } from './workflow-client';
import { promoteDraftThread } from '../threads/promote';
import { signalThread } from '../threads/workflow-client';

/** The stored post in the shape the rules read (a stored file is named by its media id, a draft's URL by its URL). */
export function accountBodyOf(row: PostRow): AccountBody {
  const refs = row.media ?? [];
  const media: MediaRef[] = refs.map((ref) => {
    const alt = ref.alt === undefined ? {} : { alt: ref.alt };
    return ref.media_id ? { id: ref.media_id, ...alt } : { url: ref.url ?? '', ...alt };
  });
  return {
    accountId: row.account_id ?? '',
    text: row.text,
    media,
    mediaSpelling: refs.length === 0 ? null : refs.some((r) => r.alt !== undefined) ? 'media' : refs.some((r) => r.url) ? 'media_urls' : 'media_ids',
    firstComment: row.first_comment_text,
    configuration: row.configuration,
  };
}

/**
 * `PATCH /api/v1/posts/:id` (publishing-api.md "PATCH"): only what is sent changes. A scheduled post or a draft that
 * stays a draft is edited in place (a scheduled post's workflow is told, so a new time moves its timer and new content
 * is what publishes). A draft given `schedule_at` or `publish: true` is promoted: every create rule runs, quota is
 * spent, and a NEW post carries `promoted_from_draft_id`; any refusal leaves the draft unchanged.
 */
export async function updatePost(rt: PostsRuntime, userId: string, postId: string, body: UpdatePostBody): Promise<RouteResult> {
  const row = await findOwnPost(rt.db, userId, postId);
  const checked = checkUpdateRequest(body, { status: row.status, promoted: row.promoted_to_id !== null });
  const early = checked.violations[0];
  if (early) throw new ApiError(early.code, early.message);
  // A draft thread is promoted whole (publishing-api.md "States and transitions" rule 3).
  if (row.thread_id !== null && row.status === 'draft' && checked.intent !== 'edit') return promoteDraftThread(rt, userId, row, body);
  const redirected = await firstCommentOnLastPart(rt, userId, row, body);
  if (redirected) return redirected;
  // A thread shares one time: its other parts move with this one and never count against its spacing.
  const unit = row.thread_id === null ? [row.id] : (await rt.db.selectFrom('posts').select('id').where('thread_id', '=', row.thread_id).execute()).map((r) => r.id);
  if (row.account_id === null) throw new ApiError('not_found', 'The account of this post was disconnected; the post can no longer change');
  const [account] = await loadPostingAccounts(rt.db, userId, [row.account_id], false);
  requireAvailablePlatform(account!.platform, rt.config.comingSoon);

  const limits = await loadLimits(rt.db, userId);
  const now = rt.now();
  const validation = validateUpdateRequest(body, {
    post: { status: row.status, promoted: row.promoted_to_id !== null, inThread: row.thread_id !== null },
    account: account!,
    plan: limits,
    now,
    current: accountBodyOf(row),
    currentScheduledAt: row.scheduled_at,
    otherScheduledTimes: (await scheduledTimesOf(rt.db, [account!.id], unit))[account!.id] ?? [],
  });
  const promoting = validation.intent !== 'edit';
  const staysDraft = row.status === 'draft' && !promoting;
  const mediaChanged = mediaSelectionOf(body) !== null;

  let refs: StoredMediaRef[] = row.media ?? [];
  let downloaded: string[] = [];
  let warnings = validation.warnings;
  if (mediaChanged || promoting) {
    const prepared = await prepareMedia(rt, {
      userId,
      fanOut: false,
      mode: staysDraft ? 'draft' : 'send',
      entries: [{ account: account!, media: validation.body.media, spelling: validation.body.mediaSpelling, configuration: validation.body.configuration }],
    });
    refs = prepared.refs.get(account!.id) ?? [];
    downloaded = prepared.downloaded;
    warnings = [...warnings, ...prepared.warnings];
  }

  const content = {
    text: validation.body.text,
    media: refs.length ? JSON.stringify(refs) : null,
    first_comment_text: validation.body.firstComment,
    first_comment_status: validation.body.firstComment === null ? null : ('pending' as const),
    first_comment_error: null,
    configuration: validation.body.configuration ? JSON.stringify(validation.body.configuration) : null,
    scheduled_at: validation.scheduledAt,
    timezone: body.timezone ?? row.timezone,
  };

  try {
    if (!promoting) {
      await rt.db.transaction().execute(async (trx) => {
        const changed = await trx
          .updateTable('posts')
          .set({ ...content, updated_at: sql`now()` })
          .where('id', '=', row.id)
          .where('status', '=', row.status)
          .where('promoted_to_id', 'is', null)
          .executeTakeFirst();
        if (changed.numUpdatedRows === 0n) throw new ApiError('post_not_editable', 'The post changed state while it was being edited (it may be publishing); read it again');
        if (row.thread_id !== null && body.schedule_at !== undefined) {
          await trx.updateTable('posts').set({ scheduled_at: content.scheduled_at, timezone: content.timezone, updated_at: sql`now()` }).where('id', 'in', unit).where('status', '=', row.status).execute();
        }
        if (row.status === 'scheduled') {
          // Editing is free, but the charges that depend on content follow it: a first comment counts as a post and
          // x links are billed, so those reservations are replaced by what the edited post now needs.
          await refundQuota(trx, [row.id], ['first_comment', 'x_link', 'x_link_first_comment']);
          const charges = chargesOf(row.id, { scheduledAt: validation.scheduledAt, xLinkBilled: validation.xLinkBilled, body: validation.body }).filter(
            (c) => c.kind !== 'post' && c.kind !== 'scheduled',
          );
          await reserveQuota(trx, { userId, limits, now, charges });
        }
      });
    } else {
      const newRow: NewPostRow & { id: string } = {
        ...content,
        id: randomUUID(),
        user_id: userId,
        account_id: account!.id,
        platform: account!.platform,
        status: validation.intent === 'promote_schedule' ? 'scheduled' : 'publishing',
        scheduled_at: validation.intent === 'promote_schedule' ? validation.scheduledAt : null,
        group_id: row.group_id,
        promoted_from_draft_id: row.id,
      };
      await rt.db.transaction().execute(async (trx) => {
        await reserveQuota(trx, { userId, limits, now, charges: chargesOf(newRow.id, { scheduledAt: newRow.scheduled_at ?? null, xLinkBilled: validation.xLinkBilled, body: validation.body }) });
        await trx.insertInto('posts').values(newRow).execute();
        const marked = await trx.updateTable('posts').set({ promoted_to_id: newRow.id, updated_at: sql`now()` }).where('id', '=', row.id).where('promoted_to_id', 'is', null).executeTakeFirst();
        if (marked.numUpdatedRows === 0n) throw new ApiError('post_not_editable', 'The draft was already promoted; edit the post it became');
      });
      await runWorkflows(rt, [newRow], newRow.status === 'publishing');
      const answer = await publishOutcomeResponse(rt, { created: [{ id: newRow.id, account: account! }], fanOut: false, groupId: null, draft: false, warnings: [] });
      const data = (answer.body as { data: Record<string, unknown> }).data;
      return { status: 200, body: { data: body.schedule_at !== undefined ? { ...data, rescheduled_post_ids: [newRow.id] } : data } };
    }
  } catch (err) {
    await rt.mediaStore.deleteDownloadedCopies(downloaded).catch(() => undefined);
    throw err;
  }

  if (row.status === 'scheduled') {
    if (mediaChanged) await dropUnusedCopies(rt, row, refs);
    if (row.thread_id !== null) await signalThread(rt, row.thread_id);
    else await signalPost(rt, row.id, validation.rescheduled ? 'reschedule' : 'edit');
  }
  const view = await getPostView(rt.db, row.id);
  const data: Record<string, unknown> = { ...view };
  if (staysDraft) data.warnings = warnings;
  if (body.schedule_at !== undefined) data.rescheduled_post_ids = [...unit].sort();
  return { status: 200, body: { data } };
}

/**
 * A thread's single first comment lives on its last part (it is published under it): sent on another part it is
 * applied there, then the rest of the request to the named part. Answers when nothing else was asked.
 */
async function firstCommentOnLastPart(rt: PostsRuntime, userId: string, row: PostRow, body: UpdatePostBody): Promise<RouteResult | null> {
  if (row.thread_id === null || body.first_comment === undefined) return null;
  const last = await rt.db.selectFrom('posts').select('id').where('thread_id', '=', row.thread_id).orderBy('thread_order', 'desc').executeTakeFirstOrThrow();
  if (last.id === row.id) return null;
  const { first_comment, ...rest } = body;
  await updatePost(rt, userId, last.id, { first_comment });
  if (Object.values(rest).some((value) => value !== undefined)) return updatePost(rt, userId, row.id, rest);
  return { status: 200, body: { data: await getPostView(rt.db, row.id) } };
}

/** Media replaced on a scheduled post: the copies downloaded for the old list are no longer needed. */
async function dropUnusedCopies(rt: PostsRuntime, row: PostRow, kept: readonly StoredMediaRef[]): Promise<void> {
  const keep = new Set(kept.map((r) => r.media_id));
  const old = (row.media ?? []).map((r) => r.media_id).filter((id): id is string => typeof id === 'string' && !keep.has(id));
  await removeUnusedCopies(rt, old, row.id).catch((err) => rt.logger.warn({ err }, 'could not remove replaced media'));
}
