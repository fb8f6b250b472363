// A link without a run id (as `herald posts stuck` prints) opens the workflow's current run.
import { error, redirect } from '@sveltejs/kit';
import { routeForEventHistory } from '@temporalio/ui/utilities/route-for';

export async function load({ params, fetch }) {
  const path = `/api/v1/namespaces/${encodeURIComponent(params.namespace)}/workflows/${encodeURIComponent(params.workflow)}`;
  const res = await fetch(path);
  const body = await res.json().catch(() => ({}));
  const runId = body?.workflowExecutionInfo?.execution?.runId;
  if (!res.ok || !runId) error(res.status === 200 ? 404 : res.status, body?.message ?? `workflow ${params.workflow} not found`);
  redirect(302, routeForEventHistory({ namespace: params.namespace, workflow: params.workflow, run: runId }));
}
