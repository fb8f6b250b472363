import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import type { NewPostRow, StoredMediaRef } from '../db/tables/posts';
import { ApiError } from '../errors';
import { reserveQuotaWith, type Charge } from '../quota/quota';
import { loadPublishableAccountsAndLimits } from './accounts-port';
import { prepareMedia } from './prepare-media';
import { publishOutcome, type CreatedPost, type PublishOutcome } from './respond';
import { validatePostRequest, type CreatePostBody, type AccountBody, type AccountPlanOf, type WarningEntry } from './rules';
import { checkCreatePostStructure } from './rules/structure';
import type { PostsRuntime } from './runtime';
import { insertPosts, postsInsertOf, scheduledTimesOf, statusOf } from './repository';
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
  const { accounts, limits } = await loadPublishableAccountsAndLimits(rt, userId, body.account_ids ?? [body.account_id!], fanOut);

  const now = rt.now();
  const validation = validatePostRequest(body, {
    accounts,
    plan: limits,
    now,
    // Only a time can collide with the account's other scheduled posts (drafts included, which warn about it).
    scheduledTimes: body.schedule_at === undefined ? {} : await scheduledTimesOf(rt.db, accounts.map((a) => a.id)),
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
  try {
    // The posts and their quota in one statement (its own transaction): the user's month row, which every publish of
    // this user waits for, is locked only while it runs, and a refusal rolls the posts back with it.
    if (draft) await insertPosts(rt.db, rows);
    else await reserveQuotaWith(rt.db, { userId, limits, now, charges: validation.accounts.flatMap((plan, i) => chargesOf(rows[i]!.id, plan)) }, postsInsertOf(rt.db, rows));
  } catch (err) {
    await rt.mediaStore.deleteDownloadedCopies(media.downloaded).catch(() => undefined);
    throw err;
  }

  const warnings: WarningEntry[] = draft ? [...validation.warnings, ...media.warnings] : [];
  const created: CreatedPost[] = rows.map((row, i) => ({ id: row.id, account: accounts[i]! }));
  if (workflowId !== null) {
    const postIds = rows.map((row) => row.id);
    await startAndAwait(rt, postIds, () => startGroupWorkflow(rt, groupId!, postIds, rows), true);
  } else if (!draft) {
    await runWorkflows(rt, rows, immediate);
  }
  return publishOutcome(rt, { created, fanOut, groupId, draft, warnings });
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

/** Starts one `publishPost` per post (rows just written), in parallel; immediate posts are awaited (see `startAndAwait`). */
export async function runWorkflows(rt: PostsRuntime, posts: readonly StartedPost[], awaitResults: boolean): Promise<void> {
  await Promise.all(posts.map((post) => startAndAwait(rt, [post.id], () => startPublishWorkflow(rt, post.id, { immediate: awaitResults, post }), awaitResults)));
}

/**
 * The workflow's result is asked for only when the change feed cannot be relied on, or after this long: a long poll
 * of the workflow's history per publish costs both processes a gRPC call (and the server an encoded history) that
 * the feed's NOTIFY makes redundant. A workflow that ends without settling its rows is still heard of, this much later.
 */
const resultFallbackMs = 5_000;

/**
 * Starts the workflow that publishes `postIds` and, when the request waits for the platform's verdict, returns once
 * every one of them settled: the change feed reports each row as its change commits; the workflow's result is the
 * fallback, asked for when the feed is in doubt or has not answered within `resultFallbackMs`. A start that fails is
 * left to the reconciler (the rows say what they need).
 */
async function startAndAwait(rt: PostsRuntime, postIds: readonly string[], start: () => Promise<WorkflowHandle>, awaitResults: boolean): Promise<void> {
  const watches = awaitResults && rt.changes ? postIds.map((id) => rt.changes!.watch(id)) : [];
  // A plain timer, cleared at the end: an aborted `timers/promises` sleep built a DOMException and a rejection per
  // publish for a fallback that almost never fires.
  let fallbackTimer: NodeJS.Timeout | undefined;
  try {
    let handle: WorkflowHandle;
    try {
      handle = await start();
    } catch (err) {
      rt.logger.error({ err, postIds }, 'could not start the publish workflow; the reconciler will');
      return;
    }
    if (!awaitResults) return;
    try {
      if (watches.length === 0) {
        await handle.result();
      } else {
        const feedInDoubt = Promise.race([...watches.map((watch) => watch.inDoubt), new Promise<void>((fire) => (fallbackTimer = setTimeout(fire, resultFallbackMs)))]);
        await Promise.race([Promise.all(watches.map((watch) => watch.settled)), feedInDoubt.then(() => handle.result())]);
      }
    } catch (err) {
      // The workflow may still be running (a dropped connection, a server hiccup): the rows say when it is done.
      rt.logger.warn({ err, postIds }, 'could not read the publish result; watching the rows instead');
      await Promise.all(postIds.map((id) => waitWhilePublishing(rt, id)));
    }
  } finally {
    clearTimeout(fallbackTimer);
    for (const watch of watches) watch.stop();
  }
}

/** Polls the row until it leaves `publishing` (bounded: 60 s), for when the workflow result cannot be read. */
async function waitWhilePublishing(rt: PostsRuntime, postId: string, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if ((await statusOf(rt.db, postId)) !== 'publishing') return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
