import { redirect } from '@sveltejs/kit';
import { routeForWorkflows } from '@temporalio/ui/utilities/route-for';

export async function load({ parent }) {
  const { settings } = await parent();
  redirect(302, routeForWorkflows({ namespace: settings.defaultNamespace }));
}
