import type { Client } from '@temporalio/client';
import type { Db } from '../db';
import { waitingUntil } from './attempt-outcomes';
import { postsNeedingWorkflowsInDetail, postsWithFirstCommentLeft } from './reconcile-queries';
import { anyRunning, unitWorkflowId, workflowState } from './unit-workflows';
import { firstCommentWorkflowId } from './workflow-client';

interface StuckPost {
  id: string;
  /** A thread part's thread: its workflow is found by ThreadId (a long thread's PostId lists only its first parts). */
  thread_id: string | null;
  status: string;
  scheduled_at: string | null;
  updated_at: string;
  retry_count: number;
  /** `missing` / `closed` when Temporal was asked; `unknown` when it could not be. */
  workflow: 'running' | 'missing' | 'closed' | 'unknown';
  reason: string;
}

/**
 * `herald posts stuck`: posts whose database state and workflow state disagree. With a Temporal client, every
 * `scheduled`/`publishing` post whose workflow is missing or closed, and every published post whose first comment
 * was left `pending` (`postsWithFirstCommentLeft`) with neither its workflow nor its comment's running. Without one (the embedded server of a running
 * service is not reachable from outside), the posts that show it from the database alone: overdue by more than
 * `graceMs` (their time, or after a failed attempt their retry's `next_attempt_at`, passed without an attempt), or
 * publishing for longer than that.
 */
export async function findStuckPosts(db: Db, client: Client | null, now = new Date(), graceMs = 5 * 60_000): Promise<StuckPost[]> {
  const rows = await postsNeedingWorkflowsInDetail(db);
  const out: StuckPost[] = [];
  for (const row of rows) {
    const base = { id: row.id, thread_id: row.thread_id, status: row.status, scheduled_at: row.scheduled_at?.toISOString() ?? null, updated_at: row.updated_at.toISOString(), retry_count: row.retry_count };
    if (client) {
      const state = await workflowState(client, unitWorkflowId(row));
      if (state !== 'running') out.push({ ...base, workflow: state, reason: `the post is ${row.status} but its workflow is ${state}` });
      continue;
    }
    const due = waitingUntil(row);
    const overdue = row.status === 'scheduled' && due !== null && now.getTime() - due > graceMs;
    const longPublishing = row.status === 'publishing' && now.getTime() - row.updated_at.getTime() > graceMs;
    if (overdue) out.push({ ...base, workflow: 'unknown', reason: row.retry_count === 0 ? 'scheduled time passed without an attempt' : "a retry's time passed without an attempt" });
    else if (longPublishing) out.push({ ...base, workflow: 'unknown', reason: 'publishing for longer than expected' });
  }
  // Published, its first comment left `pending`: stuck until a workflow of the post's runs (the reconciler starts one).
  for (const row of await postsWithFirstCommentLeft(db, client ? undefined : graceMs)) {
    const base = { id: row.id, thread_id: row.thread_id, status: row.status, scheduled_at: row.scheduled_at?.toISOString() ?? null, updated_at: row.updated_at.toISOString(), retry_count: row.retry_count };
    const reason = 'the post is published but its first comment is still pending';
    if (!client) {
      out.push({ ...base, workflow: 'unknown', reason });
      continue;
    }
    if (await anyRunning(client, [unitWorkflowId(row)])) continue;
    const state = await workflowState(client, firstCommentWorkflowId(row.id));
    if (state !== 'running') out.push({ ...base, workflow: state, reason: `${reason} and no workflow is sending it` });
  }
  return out;
}
