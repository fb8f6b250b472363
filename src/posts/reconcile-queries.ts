import { sql, type SelectQueryBuilder } from 'kysely';
import type { Database, Db } from '../db';
import { ABANDONED_AFTER_MS } from './first-comment';

/**
 * The reconciler's reads of the `posts` table (`reconcile.ts`): the posts whose status needs a running workflow, to
 * start the workflows that are missing.
 */

/**
 * Which posts a reconciler's look reads: every one needing a workflow, or those created or changed within the last
 * `changedWithinMs` (by the database's clock) beside the overdue, those publishing for long and, given `dueBeforeMs`
 * (epoch ms, by the reconciler's clock), the scheduled posts due before it: a workflow lost while its post waited (an
 * operator's terminate, a restarted standalone temporal-dev) is started again before its time, not after it.
 */
export type ReconcileScope = 'all' | { changedWithinMs: number; dueBeforeMs?: number };

/** How long past its time a post still `scheduled` goes before every periodic look reads it as overdue. */
export const OVERDUE_AFTER_MS = 60_000;

/**
 * Posts whose status needs a running workflow (`scheduled`, `publishing`), soonest first, in `scope`. Read through
 * a cursor, `PAGE_ROWS` at a time, keeping only the rows `keep` accepts: the reconciler's look a minute after a burst
 * reads every post it created, 10,000 or 100,000 of them, and most are skipped (issue 15). The cursor's transaction
 * lasts the reading only. Each row has what the reconciler uses and no more, its due time as epoch milliseconds:
 * parsing two timestamps a row was 8.8 of the 22 MB that reading allocated a minute after a burst.
 */
export async function postsNeedingWorkflows(db: Db, scope: ReconcileScope, keep: (row: PostNeedingWorkflow) => boolean = () => true): Promise<PostNeedingWorkflow[]> {
  return readThroughCursor(db, reconcilerColumns(postsNeedingWorkflowsQuery(db, scope)), keep);
}

/** `postsNeedingWorkflows(db, 'all')` with their times and retry counts (`herald posts stuck`). */
export async function postsNeedingWorkflowsInDetail(db: Db) {
  const query = postsNeedingWorkflowsQuery(db, 'all').select(['id', 'thread_id', 'group_id', 'workflow_id', 'status', 'scheduled_at', 'updated_at', 'retry_count', 'next_attempt_at']);
  return readThroughCursor(db, query, () => true);
}

async function readThroughCursor<Row>(db: Db, query: SelectQueryBuilder<Database, 'posts', Row>, keep: (row: Row) => boolean): Promise<Row[]> {
  return db.transaction().execute(async (trx) => {
    await sql`declare posts_needing_workflows no scroll cursor for ${query}`.execute(trx);
    const kept: Row[] = [];
    for (;;) {
      const page = await sql<Row>`fetch forward ${sql.lit(PAGE_ROWS)} from posts_needing_workflows`.execute(trx);
      for (const row of page.rows) if (keep(row)) kept.push(row);
      if (page.rows.length < PAGE_ROWS) return kept;
    }
  });
}

const PAGE_ROWS = 500;

type PostNeedingWorkflow = Awaited<ReturnType<ReturnType<typeof reconcilerColumns>['execute']>>[number];

function reconcilerColumns(query: ReturnType<typeof postsNeedingWorkflowsQuery>) {
  return query.select(['id', 'thread_id', 'group_id', 'workflow_id', 'status']).select(sql<number | null>`(extract(epoch from scheduled_at) * 1000)::float8`.as('scheduled_ms'));
}

function postsNeedingWorkflowsQuery(db: Db, scope: ReconcileScope) {
  // Literals: the status index holds only these two statuses (migration 0297), and a predicate of parameters proves
  // its condition in a custom plan only.
  let query = db.selectFrom('posts').where(sql<boolean>`status in ('scheduled', 'publishing')`);
  if (scope !== 'all') {
    const since = sql<Date>`now() - make_interval(secs => ${scope.changedWithinMs / 1000})`;
    query = query.where((eb) =>
      eb.or([
        eb('created_at', '>', since),
        eb('updated_at', '>', since),
        eb('scheduled_at', '<', sql<Date>`now() - make_interval(secs => ${OVERDUE_AFTER_MS / 1000})`),
        eb.and([eb('status', '=', 'publishing'), eb('updated_at', '<', sql<Date>`now() - interval '10 minutes'`)]),
        ...(scope.dueBeforeMs === undefined ? [] : [eb.and([eb('status', '=', 'scheduled'), eb('scheduled_at', '<', new Date(scope.dueBeforeMs))])]),
      ]),
    );
  }
  return query.orderBy('scheduled_at');
}

/** How long a published post's first comment may stay `pending` with no attempt begun before it is taken as left. */
const FIRST_COMMENT_LEFT_AFTER_MS = 5 * 60_000;

/**
 * Published posts whose first comment is still `pending` and that nothing is sending: never begun
 * `leftAfterMs` after the post's last change (its recording, or a user's retry reopening it), or begun longer ago
 * than any attempt lasts (`ABANDONED_AFTER_MS`), both by the database's clock; oldest first, at most 500 a look.
 * The run that recorded such a post was lost before its comment step; the reconciler starts one that sends it.
 * Read through a partial index of such rows (migration 0253), so the look does not scan the published posts.
 */
export async function postsWithFirstCommentLeft(db: Db, leftAfterMs = FIRST_COMMENT_LEFT_AFTER_MS) {
  const ago = (ms: number) => sql<Date>`now() - make_interval(secs => ${ms / 1000})`;
  return db
    .selectFrom('posts')
    .select(['id', 'thread_id', 'group_id', 'workflow_id', 'status', 'scheduled_at', 'updated_at', 'retry_count'])
    .where('status', '=', sql.lit('published'))
    .where('first_comment_status', '=', sql.lit('pending'))
    .where('first_comment_text', 'is not', null)
    .where((eb) =>
      eb.or([
        eb.and([eb('first_comment_attempt_started_at', 'is', null), eb('updated_at', '<', ago(leftAfterMs))]),
        eb('first_comment_attempt_started_at', '<', ago(ABANDONED_AFTER_MS)),
      ]),
    )
    .orderBy('updated_at')
    .limit(500)
    .execute();
}
