import { randomUUID } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { Database } from '../db';
import type { NewPostRow } from '../db/tables/posts';
import type { PublishThreadResult } from '../../workflows/publish-thread';
import { ApiError } from '../errors';
import { claimRecordOf } from '../idempotency/key-claim';
import { reserveQuota, reserveQuotaWith, type Charge } from '../quota/quota';
import { fromLastRead, publishableAccountsOf } from '../posts/accounts-port';
import { guardOf, type CreationRead } from '../posts/creation-reads';
import { prepareMedia, type PreparedMedia } from '../posts/prepare-media';
import { validateThreadRequest, type AccountPlanOf, type AccountThreadBody, type CreateThreadBody, type RuleMode, type WarningEntry } from '../posts/rules';
import { checkAccountSelection } from '../posts/rules/structure';
import type { PostsRuntime } from '../posts/runtime';
import { fanOutStarts, startAndAwait } from '../posts/await-settled';
import { untilMadeSettled } from '../posts/made-settled';
import { insertPosts, markPromoted as markDraftPromoted, postsInsertOf } from '../posts/repository';
import { againOnSpacingClash } from '../posts/spacing-guard';
import { ChangedSinceRead } from '../posts/edit-guard';
import { scheduledTimesNear } from '../posts/view-queries';
import { threadOutcome, type CreatedThread, type ThreadCreateOutcome, type ThreadOutcome } from './respond';
import { discardUnstartedThread, failUnstartedThread } from './repository';
import { startThreadWorkflow } from './workflow-client';

/**
 * `POST /api/v1/threads` (publishing-api.md "POST /api/v1/threads", decisions.md "Threads"): every account is
 * validated before anything is written; one transaction inserts one row per part (`thread_id`, `thread_order` from 1)
 * and reserves, last, the quota of every part and the first comment; then one `publishThread` workflow per thread. An
 * immediate thread is answered once it published whole or was rolled back.
 */
interface ThreadPromotion {
  /**
   * The draft parts, in `thread_order`, as the promotion read them: each new part carries its draft's id, and the
   * drafts are marked promoted in the same transaction, only if none was written since that read (`row_version`).
   */
  drafts: ReadonlyArray<{ id: string; row_version: string }>;
  /** The drafts' fan-out, which the thread they become stays in (`group_id`), as a promoted post does. */
  groupId: string | null;
}

export async function createThreads(rt: PostsRuntime, userId: string, body: CreateThreadBody, promotion?: ThreadPromotion): Promise<ThreadCreateOutcome> {
  const selection = checkAccountSelection(body)[0];
  if (selection) throw new ApiError(selection.code, selection.message);
  const fanOut = body.account_ids !== undefined;
  // Validated against the accounts and limits this process read last, if it has them (`fromLastRead`), and written.
  // A clash with a post scheduled at the same moment is judged again from a new read (`againOnSpacingClash`).
  const { threads, created, draft, groupId, warnings } = await againOnSpacingClash(() =>
    fromLastRead(rt, userId, body.account_ids ?? [body.account_id!], (read) => validateAndWrite(rt, body, fanOut, read, promotion)),
  );
  const outcomes = draft ? new Map<string, ThreadOutcome>() : await runThreadWorkflows(rt, threads.map(({ threadId, rows }) => ({ threadId, rows })));
  return threadOutcome(rt, { created, outcomes, fanOut, groupId, draft, warnings });
}

async function validateAndWrite(rt: PostsRuntime, body: CreateThreadBody, fanOut: boolean, read: CreationRead, promotion?: ThreadPromotion) {
  const { userId, limits } = read;
  const accounts = publishableAccountsOf(rt, read, body.account_ids ?? [body.account_id!], fanOut);
  const now = rt.now();
  // Only a time can collide with the account's other scheduled posts (as for a post: `createPosts`).
  const scheduledTimes = body.schedule_at === undefined ? {} : await scheduledTimesNear(rt.db, { scheduleAt: body.schedule_at, timezone: body.timezone }, accounts);
  const validation = validateThreadRequest(body, { accounts, plan: limits, now, scheduledTimes });
  const draft = validation.mode === 'draft';
  const media = await preparePartsMedia(rt, { userId, fanOut, mode: validation.mode, plans: validation.accounts });

  const groupId = fanOut ? randomUUID() : (promotion?.groupId ?? null);
  const threads = validation.accounts.map((plan) => {
    const threadId = randomUUID();
    const rows = plan.body.parts.map((part, index) => ({
      id: randomUUID(),
      user_id: userId,
      account_id: plan.account.id,
      platform: plan.account.platform,
      text: part.text,
      media: (media[index]?.refs.get(plan.account.id) ?? []).length ? JSON.stringify(media[index]!.refs.get(plan.account.id)) : null,
      first_comment_text: index === plan.body.parts.length - 1 ? plan.body.firstComment : null,
      first_comment_status: index === plan.body.parts.length - 1 && plan.body.firstComment !== null ? ('pending' as const) : null,
      configuration: plan.body.configuration ? JSON.stringify(plan.body.configuration) : null,
      status: draft ? ('draft' as const) : plan.scheduledAt ? ('scheduled' as const) : ('publishing' as const),
      scheduled_at: plan.scheduledAt,
      timezone: body.timezone ?? null,
      group_id: groupId,
      thread_id: threadId,
      thread_order: index + 1,
      promoted_from_draft_id: promotion?.drafts[index]?.id ?? null,
    })) satisfies Array<NewPostRow & { id: string }>;
    return { threadId, plan, rows };
  });

  const downloaded = media.flatMap((m) => m.downloaded);
  const rows = threads.flatMap((t) => t.rows);
  const created: CreatedThread[] = threads.map(({ threadId, plan, rows: parts }) => ({
    threadId,
    userId,
    account: { id: plan.account.id, platform: plan.account.platform },
    postIds: parts.map((r) => r.id),
  }));
  const warnings = draft ? [...validation.warnings, ...media.flatMap((m) => m.warnings)] : [];
  // A cached read is written only if its rows are still as read; under an Idempotency-Key (never a promotion, which
  // takes none), what the request made is recorded in the same statement, for a retry after a crash (`answerMadeThreads`).
  const guard = guardOf(read);
  const claimed = promotion ? undefined : claimRecordOf({ created, fan_out: fanOut, group_id: groupId, draft, warnings } satisfies MadeThreads);
  const quota = { userId, limits, now, guard, claimed, charges: threads.flatMap(({ plan, rows: parts }) => threadCharges(plan, parts.map((r) => r.id))) };
  try {
    if (draft && !promotion) await insertPosts(rt.db, rows, guard, claimed);
    // The parts and their quota in one statement (its own transaction), as a post's: the user's month row, which
    // every publish of this user waits for, is locked only while it runs, and a refusal rolls the parts back with it.
    else if (!promotion) await reserveQuotaWith(rt.db, quota, postsInsertOf(rt.db, rows));
    else {
      // The quota last: it locks the user's month row until the commit.
      await rt.db.transaction().execute(async (trx) => {
        await insertPosts(trx, rows, draft ? guard : undefined);
        await markPromoted(trx, promotion.drafts, threads[0]!.rows);
        if (!draft) await reserveQuota(trx, quota);
      });
    }
  } catch (err) {
    await rt.mediaStore.deleteDownloadedCopies(downloaded).catch(() => undefined);
    throw err;
  }
  return { threads, created, draft, groupId, warnings };
}

/** What a thread create made, as recorded under its Idempotency-Key claim (`claimRecordOf`): what its answer is made from. */
export interface MadeThreads {
  created: CreatedThread[];
  fan_out: boolean;
  group_id: string | null;
  draft: boolean;
  warnings: WarningEntry[];
}

/**
 * The answer of a thread create whose process died after its parts were written, before its answer was stored (as
 * `answerMadePosts`): from the rows once every part settled, a thread that failed from its `thread.failed` event
 * (its rows are gone: `threadOutcome`'s `lostOutcome`).
 */
export async function answerMadeThreads(rt: PostsRuntime, made: MadeThreads): Promise<ThreadCreateOutcome> {
  if (!made.draft) await untilMadeSettled(rt, made.created.flatMap((thread) => thread.postIds));
  return threadOutcome(rt, { created: made.created, outcomes: new Map(), fanOut: made.fan_out, groupId: made.group_id, draft: made.draft, warnings: made.warnings });
}

/**
 * Each draft part points at the part it became (`promoted`, in the drafts' order); a draft promoted or edited since
 * the promotion read it refuses the whole promotion, which is then judged again from a new read (`againOnChangedRow`):
 * refused if it was promoted, carrying the edit if it was edited.
 */
async function markPromoted(trx: Transaction<Database>, drafts: ThreadPromotion['drafts'], promoted: ReadonlyArray<{ id: string }>): Promise<void> {
  for (const [index, draft] of drafts.entries()) {
    if (!(await markDraftPromoted(trx, draft, promoted[index]!.id))) throw new ChangedSinceRead();
  }
}

/**
 * What one thread reserves: every part (and its scheduled slot), the first comment on the last part, and the x link
 * charges the rules billed (`posts[i].text`, `first_comment`).
 */
function threadCharges(plan: Pick<AccountPlanOf<AccountThreadBody>, 'scheduledAt' | 'xLinkBilled' | 'body'>, postIds: readonly string[]): Charge[] {
  const billed = new Set(plan.xLinkBilled);
  const lastId = postIds[postIds.length - 1]!;
  const charges: Charge[] = postIds.flatMap((postId, index): Charge[] => [
    { postId, kind: 'post' },
    ...(plan.scheduledAt ? [{ postId, kind: 'scheduled' as const }] : []),
    ...(billed.has(`posts[${index}].text`) ? [{ postId, kind: 'x_link' as const }] : []),
  ]);
  if (plan.body.firstComment !== null) {
    charges.push({ postId: lastId, kind: 'first_comment' });
    if (billed.has('first_comment')) charges.push({ postId: lastId, kind: 'x_link_first_comment' });
  }
  return charges;
}

/** The media of every part, part by part (one `prepareMedia` per part index, every account at once). */
async function preparePartsMedia(
  rt: PostsRuntime,
  input: { userId: string; fanOut: boolean; mode: RuleMode; plans: ReadonlyArray<AccountPlanOf<AccountThreadBody>> },
): Promise<PreparedMedia[]> {
  const parts = Math.max(0, ...input.plans.map((p) => p.body.parts.length));
  const prepared: PreparedMedia[] = [];
  try {
    for (let index = 0; index < parts; index += 1) {
      prepared.push(
        await prepareMedia(rt, {
          userId: input.userId,
          fanOut: input.fanOut,
          mode: input.mode,
          prefix: `posts[${index}].`,
          entries: input.plans.map((plan) => {
            const part = plan.body.parts[index];
            return { account: plan.account, media: part?.media ?? [], spelling: part?.mediaSpelling ?? null, configuration: plan.body.configuration };
          }),
        }),
      );
    }
  } catch (err) {
    await rt.mediaStore.deleteDownloadedCopies(prepared.flatMap((m) => m.downloaded)).catch(() => undefined);
    throw err;
  }
  return prepared;
}

/**
 * Starts one workflow per thread, in parallel. Immediate threads are awaited (their outcome is the answer); a start
 * that fails is left to the reconciler. One refused as invalid fails the thread (`startAndAwait`): a scheduled one
 * kept `failed`, an immediate one discarded as a thread failing at once is; in a fan-out whose other threads started,
 * it is that account's failed result (`unstarted`), every start refused the request's 500 (`fanOutStarts`). A thread
 * published whole is heard on the change feed (every part settled: recorded, and its first comment tried); a thread
 * that failed was removed, which the feed announces too, and then its workflow's result, which says why, is the
 * answer (`startAndAwait`).
 */
async function runThreadWorkflows(rt: PostsRuntime, threads: ReadonlyArray<{ threadId: string; rows: ReadonlyArray<NewPostRow & { id: string }> }>): Promise<Map<string, ThreadOutcome>> {
  const outcomes = new Map<string, ThreadOutcome>();
  const { refused } = await fanOutStarts(threads, async ({ threadId, rows }) => {
    const immediate = rows[0]!.status === 'publishing';
    const start = () => startThreadWorkflow(rt, threadId, { scheduledAt: rows[0]!.scheduled_at, immediate, rows });
    const failUnstarted = (sentence: string) => (immediate ? discardUnstartedThread : failUnstartedThread)(rt.db, threadId, sentence);
    const result = (await startAndAwait(rt, rows.map((row) => row.id), start, immediate, failUnstarted)).result as PublishThreadResult | undefined;
    if (result?.outcome === 'failed') outcomes.set(threadId, result);
  });
  for (const [{ threadId }, refusal] of refused) outcomes.set(threadId, { outcome: 'unstarted', message: refusal.message });
  return outcomes;
}
