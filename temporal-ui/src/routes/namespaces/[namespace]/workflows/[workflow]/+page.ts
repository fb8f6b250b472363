// A link without a run id (as `herald posts stuck` prints) opens the workflow's current run.
import { error, redirect } from '@sveltejs/kit';
import { fetchWorkflow } from '@temporalio/ui/services/workflow-service';
import { routeForEventHistory } from '@temporalio/ui/utilities/route-for';

export async function load({ params, fetch }) {
  const { workflow, error: failure } = await fetchWorkflow({ namespace: params.namespace, workflowId: params.workflow }, fetch);
  if (!workflow?.runId) error(404, failure?.message ?? `workflow ${params.workflow} not found`);
  redirect(302, routeForEventHistory({ namespace: params.namespace, workflow: params.workflow, run: workflow.runId }));
}
