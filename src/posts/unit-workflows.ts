import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { threadWorkflowId } from '../threads/workflow-client';
import { postWorkflowId } from './workflow-client';

/** Which workflow publishes a post and whether it runs: read by the reconciler and by `herald posts stuck`. */

export async function anyRunning(client: Client, workflowIds: readonly string[]): Promise<boolean> {
  for (const id of workflowIds) if ((await workflowState(client, id)) === 'running') return true;
  return false;
}

/** The workflow that publishes a post: its thread's, the one recorded on it (its group's), or its own. */
export function unitWorkflowId(row: { id: string; thread_id: string | null; workflow_id: string | null }): string {
  return row.thread_id ? threadWorkflowId(row.thread_id) : (row.workflow_id ?? postWorkflowId(row.id));
}

export async function workflowState(client: Client, workflowId: string): Promise<'running' | 'missing' | 'closed'> {
  try {
    const description = await client.workflow.getHandle(workflowId).describe();
    return description.status.name === 'RUNNING' ? 'running' : 'closed';
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return 'missing';
    throw err;
  }
}
