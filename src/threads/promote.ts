import type { PostRow } from '../db/tables/posts';
import type { UpdateOutcome } from '../posts/outcomes';
import { ApiError } from '../errors';
import { loadPostViews } from '../posts/view-queries';
import type { PostsRuntime } from '../posts/runtime';
import { mediaSelectionOf, type CreateThreadBody, type UpdatePostBody } from '../posts/rules';
import { createThreads } from './create';
import type { ThreadCreateOutcome } from './respond';
import { unmarkFailedPromotion } from '../posts/repository';
import { loadOwnThreadParts } from './reads';

/**
 * PATCH of any part of a draft thread with `schedule_at` or `publish: true` (publishing-api.md "States and
 * transitions" rule 3): the whole thread is promoted. Every create rule runs over the thread as it would be sent (the
 * named part with the PATCH's text and media, the first comment and block for the thread), quota is spent, and new
 * parts carry `promoted_from_draft_id`; a refusal, or a publication that fails and is rolled back, leaves the drafts
 * as they were. Answer: the part that was named, as it now is, with `promoted_from_draft_ids` (every draft part, in
 * `thread_order`) and, when `schedule_at` was sent, `rescheduled_post_ids` (every new part).
 */
export async function promoteDraftThread(rt: PostsRuntime, userId: string, named: PostRow, body: UpdatePostBody): Promise<UpdateOutcome> {
  const drafts = await loadOwnThreadParts(rt.db, userId, named.thread_id!);
  if (drafts.some((d) => d.status !== 'draft' || d.promoted_to_id !== null)) throw new ApiError('post_not_editable', 'The draft was already promoted; edit the thread it became');
  const last = drafts[drafts.length - 1]!;
  const firstComment = body.first_comment !== undefined ? body.first_comment : last.first_comment_text;
  const configuration = body.configuration !== undefined ? body.configuration : last.configuration ? { [named.platform]: last.configuration } : undefined;
  const thread: CreateThreadBody = {
    account_id: named.account_id ?? undefined,
    posts: drafts.map((draft) => (draft.id === named.id ? partWithChanges(draft, body) : partOf(draft))),
    ...(firstComment ? { first_comment: firstComment } : {}),
    ...(configuration && Object.keys(configuration).length ? { configuration } : {}),
    ...(body.schedule_at !== undefined ? { schedule_at: body.schedule_at } : {}),
    // As a draft post's PATCH: a local time is read in the request's timezone or the account's, never the draft's.
    ...(body.timezone !== undefined ? { timezone: body.timezone } : {}),
  } as CreateThreadBody;

  const draftIds = drafts.map((d) => d.id);
  let created: ThreadCreateOutcome;
  try {
    created = await createThreads(rt, userId, thread, { drafts, groupId: named.group_id });
  } catch (err) {
    await unmarkFailedPromotion(rt.db, draftIds);
    throw err;
  }
  if (created.kind === 'platform_refused') {
    // A thread that failed and was rolled back left no rows: its drafts are as they were.
    await unmarkFailedPromotion(rt.db, draftIds);
    return created;
  }
  if (created.kind !== 'created') throw new Error('a promoted draft thread is one thread, never a fan-out');
  const { posts } = created;
  const newNamed = posts[drafts.findIndex((d) => d.id === named.id)]!;
  const [view] = await loadPostViews(rt.db, [newNamed.id]);
  const data: Record<string, unknown> = { ...view, promoted_from_draft_ids: draftIds };
  if (body.schedule_at !== undefined) data.rescheduled_post_ids = posts.map((p) => p.id);
  return { kind: 'updated', post: data };
}

function partOf(draft: PostRow): CreateThreadBody['posts'][number] {
  const refs = draft.media ?? [];
  const part: CreateThreadBody['posts'][number] = { text: draft.text };
  if (refs.length) part.media = refs.map((ref) => ({ ...(ref.media_id ? { id: ref.media_id } : { url: ref.url ?? '' }), ...(ref.alt !== undefined ? { alt: ref.alt } : {}) })) as never;
  return part;
}

function partWithChanges(draft: PostRow, body: UpdatePostBody): CreateThreadBody['posts'][number] {
  const part = partOf(draft);
  if (body.text !== undefined) part.text = body.text;
  const media = mediaSelectionOf(body);
  if (media !== null) {
    delete part.media;
    if (media.items.length) part.media = media.items as never;
  }
  return part;
}
