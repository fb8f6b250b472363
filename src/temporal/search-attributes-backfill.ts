import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { SearchAttributePair } from '@temporalio/common';
import type { Db } from '../db';
import type { Logger } from '../logger';
import { groupWorkflowId, postWorkflowId } from '../posts/workflow-client';
import { eachAtMost } from '../process/each-at-most';
import { threadWorkflowId } from '../threads/workflow-client';
import { searchAttributesOf, searchedPostsOf, type SearchedPost } from './search-attributes';

/**
 * Gives Herald's search attributes to the running post, thread and group workflows that were started without them
 * (their registration was refused then, `registerSearchAttributes`): only a workflow can set its own, so each is sent
 * `searchAttributesRegistered` with what its rows say (`workflows/search-attributes-signal.ts`). Run after every
 * successful registration, so a process that restarted before the retry succeeded still has its predecessor's found:
 * on a healthy cluster that is one list call answering nothing.
 *
 * Bounded by the workflows waiting: their ids are listed first (the list would shift under the signals otherwise),
 * then handled by batches of `BATCH` (one read of their rows, then their signals, `SIGNALS_AT_ONCE` at a time).
 */
const QUERY = `ExecutionStatus = 'Running' AND WorkflowType IN ('publishPost', 'publishThread', 'publishGroup') AND PostId IS NULL`;
const BATCH = 256;
const SIGNALS_AT_ONCE = 8;
/** The signal of `workflows/search-attributes-signal.ts` (a string here: this side never loads workflow code). */
const SIGNAL = 'searchAttributesRegistered';

/** The id prefixes of the three workflows, from the functions that name them. */
const KINDS = [
  [postWorkflowId(''), 'postIds'],
  [threadWorkflowId(''), 'threadIds'],
  [groupWorkflowId(''), 'groupIds'],
] as const;

interface BackfillResult {
  listed: number;
  signalled: number;
  /** Signals that failed (logged); the next successful registration, at the next start, tries them again. */
  failed: number;
}

export async function giveSearchAttributesToRunning(client: Client, db: Db, logger: Logger, signal?: AbortSignal): Promise<BackfillResult> {
  const listed: string[] = [];
  for await (const execution of client.workflow.list({ query: QUERY, pageSize: 1_000 })) {
    if (signal?.aborted) break;
    listed.push(execution.workflowId);
  }
  let signalled = 0;
  let failed = 0;
  for (let at = 0; at < listed.length && !signal?.aborted; at += BATCH) {
    const batch = listed.slice(at, at + BATCH);
    const pairsOf = attributesByWorkflow(batch, await searchedPostsOf(db, idsOf(batch)));
    await eachAtMost(batch, SIGNALS_AT_ONCE, signal, async (workflowId) => {
      const pairs = pairsOf.get(workflowId);
      if (!pairs?.length) return; // its rows are gone: it ends at its next read
      try {
        await client.workflow.getHandle(workflowId).signal(SIGNAL, pairs);
        signalled += 1;
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) return; // ended meanwhile
        failed += 1;
        logger.warn({ err, workflowId }, 'could not give a running workflow its search attributes');
      }
    });
  }
  if (listed.length > 0) logger.info({ listed: listed.length, signalled, failed }, 'search attributes given to running workflows started without them');
  return { listed: listed.length, signalled, failed };
}

function idsOf(workflowIds: readonly string[]): { postIds: string[]; threadIds: string[]; groupIds: string[] } {
  const ids = { postIds: [] as string[], threadIds: [] as string[], groupIds: [] as string[] };
  for (const workflowId of workflowIds) {
    const kind = KINDS.find(([prefix]) => workflowId.startsWith(prefix));
    if (kind) ids[kind[1]].push(workflowId.slice(kind[0].length));
  }
  return ids;
}

/** Each workflow's attributes from the rows read: a post's own row, a thread's or a group's every part. */
function attributesByWorkflow(workflowIds: readonly string[], rows: readonly SearchedPost[]): Map<string, SearchAttributePair[]> {
  const byWorkflow = new Map<string, SearchedPost[]>();
  const wanted = new Set(workflowIds);
  const add = (workflowId: string, row: SearchedPost) => {
    if (!wanted.has(workflowId)) return;
    const posts = byWorkflow.get(workflowId);
    if (posts) posts.push(row);
    else byWorkflow.set(workflowId, [row]);
  };
  for (const row of rows) {
    add(postWorkflowId(row.id), row);
    if (row.thread_id) add(threadWorkflowId(row.thread_id), row);
    if (row.group_id) add(groupWorkflowId(row.group_id), row);
  }
  return new Map([...byWorkflow].map(([workflowId, posts]) => [workflowId, searchAttributesOf(posts)]));
}
