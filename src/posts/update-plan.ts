import type { PostingAccount } from './creation-reads';
import type { PostRow, PostUpdate, StoredMediaRef } from '../db/tables/posts';
import { ApiError } from '../errors';
import type { loadLimits } from '../quota/quota';
import { loadPublishableAccountsAndLimits } from './accounts-port';
import { mediaIdsOf } from './media-cleanup';
import { prepareMedia } from './prepare-media';
import { scheduledTimesNear, type OwnPostRow } from './view-queries';
import { mediaSelectionOf, validateUpdateRequest, type AccountBody, type EditablePost, type MediaRef, type UpdatePostBody, type UpdateValidation, type WarningEntry } from './rules';
import type { PostsRuntime } from './runtime';
import { threadPartIds } from '../threads/reads';

/**
 * What a `PATCH /api/v1/posts/:id` decides before it writes (`update.ts` writes it): the change judged against every
 * rule of the post's account from the stored post (`planUpdate`), the media it names prepared, and the columns it
 * writes (`contentOf`), for an edit in place and a promoted draft's new post alike.
 */

/** The stored post in the shape the rules read (a stored file is named by its media id, a draft's URL by its URL). */
function accountBodyOf(row: PostRow): AccountBody {
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

/** The post as the update rules judge whether it can change (`checkUpdateRequest`). */
export function editableOf(row: PostRow): EditablePost {
  return { status: row.status, promoted: row.promoted_to_id !== null, attemptOpen: row.publish_attempt_started_at !== null };
}

/** Everything an update decided before it writes: the validated change and the media it prepared. */
export interface PlannedUpdate {
  row: OwnPostRow;
  account: PostingAccount;
  limits: Awaited<ReturnType<typeof loadLimits>>;
  now: Date;
  /** The posts that move together: the post, or every part of its thread. */
  unit: string[];
  validation: UpdateValidation;
  promoting: boolean;
  staysDraft: boolean;
  mediaChanged: boolean;
  refs: StoredMediaRef[];
  /** Media this request downloaded: removed again when the write fails. */
  downloaded: string[];
  warnings: WarningEntry[];
}

/** Validates the change against every rule of the post's account, then prepares the media it names. */
export async function planUpdate(rt: PostsRuntime, userId: string, row: OwnPostRow, body: UpdatePostBody): Promise<PlannedUpdate> {
  // A thread shares one time: its other parts move with this one and never count against its spacing.
  const unit = row.thread_id === null ? [row.id] : await threadPartIds(rt.db, row.thread_id);
  if (row.account_id === null) throw new ApiError('not_found', 'The account of this post was disconnected; the post can no longer change');
  const { accounts, limits } = await loadPublishableAccountsAndLimits(rt, userId, [row.account_id], false);
  const [account] = accounts;
  const now = rt.now();
  const validation = validateUpdateRequest(body, {
    post: { ...editableOf(row), inThread: row.thread_id !== null },
    account: account!,
    plan: limits,
    now,
    current: accountBodyOf(row),
    currentScheduledAt: row.scheduled_at,
    // Only a new time can clash with the account's other scheduled posts, and only within the rule's window.
    otherScheduledTimes:
      body.schedule_at === undefined
        ? []
        : ((await scheduledTimesNear(rt.db, { scheduleAt: body.schedule_at, timezone: body.timezone }, [account!], unit))[account!.id] ?? []),
  });
  const promoting = validation.intent !== 'edit';
  const staysDraft = row.status === 'draft' && !promoting;
  const mediaChanged = mediaSelectionOf(body) !== null;
  const planned: PlannedUpdate = { row, account: account!, limits, now, unit, validation, promoting, staysDraft, mediaChanged, refs: row.media ?? [], downloaded: [], warnings: validation.warnings };
  // A new configuration re-checks the stored media against the new placement (a reel needs a video): the request's
  // rules see a stored file by its id alone, so its own facts are read, as for new media. The row keeps the refs it
  // stores (a downloaded copy keeps the URL it came from); only new or promoted media replace them.
  const mediaReplaced = mediaChanged || promoting;
  if (mediaReplaced || (body.configuration !== undefined && validation.body.media.length > 0)) {
    const prepared = await prepareMedia(rt, {
      userId,
      fanOut: false,
      mode: staysDraft ? 'draft' : 'send',
      // A draft holds uploads only: one deleted since is refused at promotion (`media_not_found`).
      heldIds: row.status === 'draft' ? undefined : new Set(mediaIdsOf(row)),
      entries: [{ account: account!, media: validation.body.media, spelling: validation.body.mediaSpelling, configuration: validation.body.configuration }],
    });
    if (mediaReplaced) planned.refs = prepared.refs.get(account!.id) ?? [];
    planned.downloaded = prepared.downloaded;
    planned.warnings = [...planned.warnings, ...prepared.warnings];
  }
  return planned;
}

/** The columns the change writes, for an edit in place and for the post a promotion creates alike. */
export function contentOf(planned: PlannedUpdate, body: UpdatePostBody) {
  const { validation } = planned;
  return {
    text: validation.body.text,
    media: planned.refs.length ? JSON.stringify(planned.refs) : null,
    first_comment_text: validation.body.firstComment,
    first_comment_status: validation.body.firstComment === null ? null : ('pending' as const),
    first_comment_error: null,
    configuration: validation.body.configuration ? JSON.stringify(validation.body.configuration) : null,
    scheduled_at: validation.scheduledAt,
    timezone: body.timezone ?? planned.row.timezone,
  } satisfies PostUpdate;
}
