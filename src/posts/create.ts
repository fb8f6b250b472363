import { randomUUID } from 'node:crypto';
import type { NewPostRow, StoredMediaRef } from '../db/tables/posts';
import { ApiError } from '../errors';
import { claimRecordOf } from '../idempotency/key-claim';
import { reserveQuotaWith, type Charge } from '../quota/quota';
import { fromLastRead, publishableAccountsOf } from './accounts-port';
import { guardOf, type CreationRead } from './creation-reads';
import { prepareMedia } from './prepare-media';
import { publishOutcome, type CreatedPost, type PublishOutcome } from './respond';
import type { PostView } from './post-view';
import { validatePostRequest, type CreatePostBody, type AccountBody, type AccountPlanOf, type WarningEntry } from './rules';
import { checkCreatePostStructure } from './rules/structure';
import type { PostsRuntime } from './runtime';
import { fanOutStarts, startAndAwait, unstartedAmong } from './await-settled';
import { untilMadeSettled } from './made-settled';
import { failUnstartedPosts, insertPosts, postsInsertOf } from './repository';
import { againOnSpacingClash } from './spacing-guard';
import { loadPostViews, scheduledTimesNear } from './view-queries';
import { groupWorkflowId, startGroupWorkflow, startPublishWorkflow, type StartedPost } from './workflow-client';

/**
 * `POST /api/v1/posts` (publishing-api.md "POST /api/v1/posts"): validate everything (every account of a fan-out)
 * before anything is written; then one statement reserves the quota and inserts the rows; then one `publishPost`
 * workflow per row. An immediate post is answered once the platform answered (and its first comment was tried).
 */
export async function createPosts(rt: PostsRuntime, userId: string, body: CreatePostBody): Promise<PublishOutcome> {
  const structure = checkCreatePostStructure(body)[0];
  if (structure) throw new ApiError(structure.code, structure.message);
  const fanOut = body.account_ids !== undefined;
  // Validated against the accounts and limits this process read last, if it has them (`fromLastRead`), and written.
  // A clash with a post scheduled at the same moment is judged again from a new read (`againOnSpacingClash`).
  const { rows, created, draft, immediate, groupId, workflowId, warnings } = await againOnSpacingClash(() =>
    fromLastRead(rt, userId, body.account_ids ?? [body.account_id!], (read) => validateAndWrite(rt, body, fanOut, read)),
  );

  let views: PostView[] | undefined;
  let unstarted: ReadonlySet<string> | undefined;
  if (workflowId !== null) {
    const postIds = rows.map((row) => row.id);
    ({ views } = await startAndAwait(rt, postIds, () => startGroupWorkflow(rt, groupId!, postIds, rows), true, (sentence) => failUnstartedPosts(rt.db, postIds, sentence)));
  } else if (!draft) {
    ({ views, unstarted } = await runWorkflows(rt, rows, immediate));
  }
  return publishOutcome(rt, { created, fanOut, groupId, draft, warnings, views, unstarted });
}

async function validateAndWrite(rt: PostsRuntime, body: CreatePostBody, fanOut: boolean, read: CreationRead) {
  const { userId, limits } = read;
  const accounts = publishableAccountsOf(rt, read, body.account_ids ?? [body.account_id!], fanOut);
  const now = rt.now();
  const validation = validatePostRequest(body, {
    accounts,
    plan: limits,
    now,
    // Only a time can collide with the account's other scheduled posts (drafts included, which warn about it).
    scheduledTimes: body.schedule_at === undefined ? {} : await scheduledTimesNear(rt.db, { scheduleAt: body.schedule_at, timezone: body.timezone }, accounts),
  });
  const draft = validation.mode === 'draft';
  const media = await prepareMedia(rt, {
    userId,
    fanOut,
    mode: validation.mode,
    entries: validation.accounts.map((plan) => ({ account: plan.account, media: plan.body.media, spelling: plan.body.mediaSpelling, configuration: plan.body.configuration })),
  });

  const groupId = fanOut ? randomUUID() : null;
  const immediate = !draft && validation.accounts.some((plan) => plan.scheduledAt === null);
  // An immediate fan-out is published by one workflow for the group; everything else by one per post.
  const workflowId = groupId !== null && immediate ? groupWorkflowId(groupId) : null;
  const rows = validation.accounts.map((plan) =>
    newRow(plan, { userId, groupId, workflowId, draft, timezone: body.timezone ?? null, media: media.refs.get(plan.account.id) ?? [] }),
  );
  const created: CreatedPost[] = rows.map((row, i) => ({ id: row.id, account: { id: accounts[i]!.id, platform: accounts[i]!.platform } }));
  const warnings: WarningEntry[] = draft ? [...validation.warnings, ...media.warnings] : [];
  // A cached read is written only if its rows are still as read; under an Idempotency-Key, what the request made is
  // recorded in the same statement, for a retry after a crash to answer from (`answerMadePosts`).
  const guard = guardOf(read);
  const claimed = claimRecordOf({ created, fan_out: fanOut, group_id: groupId, draft, warnings } satisfies MadePosts);
  try {
    // The posts and their quota in one statement (its own transaction): the user's month row, which every publish of
    // this user waits for, is locked only while it runs, and a refusal rolls the posts back with it.
    if (draft) await insertPosts(rt.db, rows, guard, claimed);
    else await reserveQuotaWith(rt.db, { userId, limits, now, guard, claimed, charges: validation.accounts.flatMap((plan, i) => chargesOf(rows[i]!.id, plan)) }, postsInsertOf(rt.db, rows));
  } catch (err) {
    await rt.mediaStore.deleteDownloadedCopies(media.downloaded).catch(() => undefined);
    throw err;
  }
  return { rows, created, draft, immediate, groupId, workflowId, warnings };
}

/** What a create made, as recorded under its Idempotency-Key claim (`claimRecordOf`): what its answer is made from. */
export interface MadePosts {
  created: CreatedPost[];
  fan_out: boolean;
  group_id: string | null;
  draft: boolean;
  warnings: WarningEntry[];
}

/**
 * The answer of a create whose process died after its posts were written, before its answer was stored: given to the
 * retry with the same key that took the claim over, from the rows `made` names once they settled as the first
 * request would have waited for (`untilMadeSettled`; the workflows carry on without it), as `createPosts` answers.
 */
export async function answerMadePosts(rt: PostsRuntime, made: MadePosts): Promise<PublishOutcome> {
  if (!made.draft) await untilMadeSettled(rt, made.created.map((post) => post.id));
  const views = await loadPostViews(rt.db, made.created.map((post) => post.id));
  // Posts whose start Temporal refused: Herald's failure, not the platform's, as the first answer said.
  const unstarted = made.draft ? undefined : unstartedAmong(views);
  return publishOutcome(rt, { created: made.created, fanOut: made.fan_out, groupId: made.group_id, draft: made.draft, warnings: made.warnings, views, unstarted });
}

function newRow(
  plan: AccountPlanOf<AccountBody>,
  options: { userId: string; groupId: string | null; workflowId: string | null; draft: boolean; timezone: string | null; media: StoredMediaRef[] },
): NewPostRow & { id: string } {
  const { account, body } = plan;
  return {
    id: randomUUID(),
    user_id: options.userId,
    account_id: account.id,
    platform: account.platform,
    text: body.text,
    media: options.media.length ? JSON.stringify(options.media) : null,
    first_comment_text: body.firstComment,
    first_comment_status: body.firstComment === null ? null : 'pending',
    configuration: body.configuration ? JSON.stringify(body.configuration) : null,
    status: options.draft ? 'draft' : plan.scheduledAt ? 'scheduled' : 'publishing',
    scheduled_at: plan.scheduledAt,
    timezone: options.timezone,
    group_id: options.groupId,
    workflow_id: options.workflowId,
  };
}

/** What one post reserves: itself, its scheduled slot, its first comment, and the x link charges of paid plans. */
export function chargesOf(postId: string, plan: Pick<AccountPlanOf<AccountBody>, 'scheduledAt' | 'xLinkBilled' | 'body'>): Charge[] {
  const charges: Charge[] = [{ postId, kind: 'post' }];
  if (plan.scheduledAt) charges.push({ postId, kind: 'scheduled' });
  if (plan.body.firstComment !== null) charges.push({ postId, kind: 'first_comment' });
  for (const field of plan.xLinkBilled) charges.push({ postId, kind: field === 'first_comment' ? 'x_link_first_comment' : 'x_link' });
  return charges;
}

/**
 * Starts one `publishPost` per post (rows just written), in parallel; immediate posts are awaited (see `startAndAwait`).
 * Returns the posts' views when every one settled with the view its recording gave (then the answer needs no read),
 * and the posts whose start Temporal refused as invalid while others started (`fanOutStarts`: failed, refunded,
 * their accounts' results say so); every start refused is the request's 500.
 */
export async function runWorkflows(rt: PostsRuntime, posts: readonly StartedPost[], awaitResults: boolean): Promise<{ views?: PostView[]; unstarted: ReadonlySet<string> }> {
  const { done, refused } = await fanOutStarts(posts, (post) =>
    startAndAwait(rt, [post.id], () => startPublishWorkflow(rt, post.id, { immediate: awaitResults, post }), awaitResults, (sentence) => failUnstartedPosts(rt.db, [post.id], sentence)),
  );
  const views = posts.flatMap((post) => done.get(post)?.views ?? []);
  return { views: views.length === posts.length ? views : undefined, unstarted: new Set([...refused.keys()].map((post) => post.id)) };
}
