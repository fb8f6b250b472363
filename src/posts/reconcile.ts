import { settleLeftReplies } from '../comments/actions-reply-left';
import { eachAtMost } from '../process/each-at-most';
import { OVERDUE_AFTER_MS, postsNeedingWorkflows, postsWithFirstCommentLeft, type ReconcileScope } from './reconcile-queries';
import { disownHolds } from './repository';
import type { PostsRuntime } from './runtime';
import { anyRunning, unitWorkflowId, workflowState } from './unit-workflows';
import { firstCommentWorkflowId, refusedAsInvalid, startFirstCommentWorkflow, startGroupWorkflow, startPublishWorkflow } from './workflow-client';
import { startThreadWorkflow } from '../threads/workflow-client';

/**
 * Keeps Postgres and Temporal in agreement. Every post whose status needs a workflow (`scheduled`, `publishing`) gets
 * its `publishPost` (started with conflict policy USE_EXISTING, so a running one is left alone and a post never gets
 * two); a workflow whose post is gone ends by itself at its next read of the row. Run over every such post when the
 * service starts (an embedded, memory-only Temporal forgets everything on restart: this is what keeps scheduled posts
 * alive), and every minute over the posts that look neglected: created or changed since the last look that went
 * through without a failure (maybe never started: a failed start, a process that died between the insert and the
 * start), overdue, publishing for long, or due within the hold's lead and two looks (`dueSoon`).
 */
interface ReconcileResult {
  checked: number;
  /** The ids of the workflows it started (a running one is left alone). */
  started: string[];
  /** Workflows it could not look at or start (logged): the next look goes back to before this one. */
  failed: number;
  /**
   * Workflows Temporal refused to start as invalid (INVALID_ARGUMENT, logged as an error naming their posts): asking
   * again gets the same answer, so they neither widen the next look nor are asked for again by this process's
   * periodic looks (`refusedStarts`); the next service start asks once more (after the operator's fix).
   */
  refused: string[];
}

/**
 * How far before the last clean look's start the next one reaches back: a post's `created_at` is its inserting
 * transaction's start, and a row committed just after a look read the table is still found by the next. Until
 * 2026-11-27 every look reached back a fixed 10 minutes, so a burst's rows were read ten times, and a post created
 * during a Temporal outage longer than that went unstarted until it was overdue.
 */
const LOOK_MARGIN_MS = 60_000;

/**
 * A scheduled post not yet overdue whose workflow this process started, or a look saw running, within the last
 * minutes (`RecentlyRunning`): the periodic look skips it, whether it came as created moments ago or as due soon (a
 * burst's posts are not described one by one at every look, nor again at every look of their last minutes). The
 * first look that reads a post due soon describes it, before its hold begins; a workflow lost after that is
 * started again once the post is overdue, as every post's is.
 */
function knownRunningAndNotOverdue(rt: PostsRuntime, workflowId: string, row: { status: string; scheduled_ms: number | null }, nowMs: number): boolean {
  return row.status === 'scheduled' && row.scheduled_ms !== null && row.scheduled_ms > nowMs - OVERDUE_AFTER_MS && rt.recentlyRunning?.has(workflowId) === true;
}

/**
 * How far past the hold's lead a periodic look reaches for scheduled posts (`dueSoon`): two looks, so a workflow lost
 * while its post waited is looked for at least once before the post's hold would have begun, even by a look that
 * comes late. The first look that reads a post due this soon describes it; later looks skip it until it is overdue
 * (`knownRunningAndNotOverdue`): a burst scheduled long ago is described once before its instant, not at every look.
 */
const DUE_SOON_MARGIN_MS = 2 * 60_000;

/**
 * Units described, then disowned and started, together (`disownHolds`: one UPDATE a batch, where it was one a post:
 * a start over a memory-only Temporal restarts every waiting post, 100,000 waiting were 100,000 statements). Small
 * enough that a batch's describes are answered within a second or two, so a start follows its describe closely.
 */
const RESTART_BATCH = 256;

/** Temporal calls (describes, starts) a look makes at once. */
const LOOK_CONCURRENCY = 8;

/** A periodic scope widened to the scheduled posts due within the lead plus `DUE_SOON_MARGIN_MS` of `nowMs`. */
function dueSoon(rt: PostsRuntime, scope: ReconcileScope, nowMs: number): ReconcileScope {
  return scope === 'all' ? scope : { ...scope, dueBeforeMs: nowMs + rt.dueLeadMs + DUE_SOON_MARGIN_MS };
}

export async function reconcilePosts(
  rt: PostsRuntime,
  scope: ReconcileScope = 'all',
  signal?: AbortSignal,
  refusedStarts: Set<string> = new Set(),
): Promise<ReconcileResult> {
  // Skipped as they are read, not after: a burst's rows are never all held at once. A unit (a thread's parts) is
  // skipped only if every one of its rows is; one that is not is looked at, as before.
  let checked = 0;
  const nowMs = rt.now().getTime(); // one clock reading for the whole look, not one per row read
  const rows = await postsNeedingWorkflows(rt.db, dueSoon(rt, scope, nowMs), (row) => {
    checked++;
    const workflowId = unitWorkflowId(row);
    if (refusedStarts.has(workflowId)) return false;
    return scope === 'all' || !knownRunningAndNotOverdue(rt, workflowId, row, nowMs);
  });
  const started: string[] = [];
  const refused: string[] = [];
  let failed = 0;
  // A thread part is published by its thread's workflow, never by one of its own (it would go out standalone); the
  // posts of an immediate fan-out by their group's, restarted with those still publishing.
  const units = new Map<string, { row: (typeof rows)[number]; postIds: string[] }>();
  for (const row of rows) {
    const id = unitWorkflowId(row);
    const unit = units.get(id) ?? { row, postIds: [] };
    unit.postIds.push(row.id);
    units.set(id, unit);
  }
  const queue = [...units.entries()];
  // By batches: each unit is described (a running workflow is left alone); the lost ones' holds are disowned in one
  // statement; then they are started, each after its rows' bump, as before.
  for (let at = 0; at < queue.length && !signal?.aborted; at += RESTART_BATCH) {
    const lost: typeof queue = [];
    await eachAtMost(queue.slice(at, at + RESTART_BATCH), LOOK_CONCURRENCY, signal, async (unit) => {
      const [workflowId, { postIds }] = unit;
      try {
        if ((await workflowState(rt.temporal!, workflowId)) !== 'running') lost.push(unit);
        else if (scope !== 'all') rt.recentlyRunning?.record(workflowId);
      } catch (err) {
        failed++;
        rt.logger.error({ err, workflowId, postIds }, 'reconcile: could not start a post workflow');
      }
    });
    // A hold of a lost run may still be waiting in a worker: it must not claim what the new run will hold. (The posts
    // of a group, an immediate fan-out, have no hold.)
    const lostRows = lost.map(([, unit]) => unit.row);
    try {
      await disownHolds(rt.db, {
        postIds: lostRows.filter((row) => !row.thread_id && !(row.workflow_id && row.group_id)).map((row) => row.id),
        threadIds: lostRows.flatMap((row) => (row.thread_id ? [row.thread_id] : [])),
      });
    } catch (err) {
      failed += lost.length;
      rt.logger.error({ err, workflowIds: lost.map(([id]) => id) }, 'reconcile: could not disown the holds of lost workflows; not started');
      continue;
    }
    await eachAtMost(lost, LOOK_CONCURRENCY, signal, async ([workflowId, { row, postIds }]) => {
      try {
        if (row.thread_id) await startThreadWorkflow(rt, row.thread_id);
        else if (row.workflow_id && row.group_id) await startGroupWorkflow(rt, row.group_id, postIds, undefined, { takenOver: true });
        else await startPublishWorkflow(rt, row.id);
        started.push(workflowId);
      } catch (err) {
        if (refusedAsInvalid(err)) {
          refused.push(workflowId);
          refusedStarts.add(workflowId);
          rt.logger.error(
            { err, workflowId, postIds, refusal: err.cause instanceof Error ? err.cause.message : String(err.cause) },
            'reconcile: Temporal refused to start the workflow of these posts as invalid; not asked again until the service restarts (herald posts stuck lists them)',
          );
          return;
        }
        failed++;
        rt.logger.error({ err, workflowId, postIds }, 'reconcile: could not start a post workflow');
      }
    });
  }
  const followUps = await startLeftFirstComments(rt, signal);
  // Reply reservations left by a stopped process: looked at apart from the posts' window (their failures are logged
  // and retried at the next look, and do not hold the window back).
  await settleLeftReplies(rt, signal).catch((err) => rt.logger.error({ err }, 'reconcile: settling replies left reserved failed'));
  return { checked, started: [...started, ...followUps.started], failed: failed + followUps.failed, refused };
}

/**
 * Published posts whose first comment stayed `pending` (`postsWithFirstCommentLeft`: the run that recorded the post
 * was lost before its comment step) get `sendPendingFirstComment`, never while a workflow of the post's is running
 * (it may be about to send it). The reconciler sends nothing itself; the comment's mark keeps it from going out twice.
 */
async function startLeftFirstComments(rt: PostsRuntime, signal?: AbortSignal): Promise<ReconcileResult> {
  const rows = await postsWithFirstCommentLeft(rt.db);
  const started: string[] = [];
  let failed = 0;
  for (const row of rows) {
    if (signal?.aborted) break;
    try {
      if (await anyRunning(rt.temporal!, [unitWorkflowId(row), firstCommentWorkflowId(row.id)])) continue;
      started.push((await startFirstCommentWorkflow(rt, row.id)).workflowId);
    } catch (err) {
      failed++;
      rt.logger.error({ err, postId: row.id }, 'reconcile: could not start the workflow of a first comment left pending');
    }
  }
  return { checked: rows.length, started, failed, refused: [] };
}


/**
 * Runs `reconcilePosts` now over everything, then every `intervalMs` over what changed since the last clean look
 * (one without a failure, `LOOK_MARGIN_MS` before its start; over everything again until the first is clean) and the
 * overdue; a look still running when the next is due lets that one pass. `stop()` ends the run in progress after
 * the workflow it is starting (a service stopping does not go on starting workflows through a client being closed)
 * and resolves once it has.
 */
export function startReconciler(rt: PostsRuntime, intervalMs = 60_000): { first: Promise<ReconcileResult>; stop(): Promise<void> } {
  const stopping = new AbortController();
  /** Workflows Temporal refused as invalid: this process does not ask again (see `ReconcileResult.refused`). */
  const refusedStarts = new Set<string>();
  let lastCleanStart: number | undefined;
  let looking = false;
  const look = async (scope: ReconcileScope) => {
    looking = true;
    const start = performance.now();
    try {
      const result = await reconcilePosts(rt, scope, stopping.signal, refusedStarts);
      if (result.failed === 0 && !stopping.signal.aborted) lastCleanStart = start;
      return result;
    } finally {
      looking = false;
    }
  };
  const first = look('all').catch((err) => {
    rt.logger.error({ err }, 'reconcile at start failed');
    return { checked: 0, started: [], failed: 1, refused: [] };
  });
  let running: Promise<unknown> = first;
  const timer = setInterval(() => {
    rt.recentlyRunning?.forgetOld();
    // One look at a time: a look over everything (at start-up with many posts waiting, or after failures) can take
    // longer than the interval, and the next one reaches back to the last clean look's start anyway.
    if (looking) return;
    const scope = lastCleanStart === undefined ? 'all' : { changedWithinMs: performance.now() - lastCleanStart + LOOK_MARGIN_MS };
    running = look(scope).catch((err) => rt.logger.error({ err }, 'periodic reconcile failed'));
  }, intervalMs);
  timer.unref();
  return {
    first,
    stop: async () => {
      clearInterval(timer);
      stopping.abort();
      await Promise.all([first, running]);
    },
  };
}
