import { redirect } from '@sveltejs/kit';
import { routeForEventHistory } from '@temporalio/ui/utilities/route-for';

export function load({ params }) {
  redirect(302, routeForEventHistory({ namespace: params.namespace, workflow: params.workflow, run: params.run }));
}
