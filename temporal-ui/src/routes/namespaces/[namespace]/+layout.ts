// The namespace's search attributes (Herald's PostId, ThreadId ... among them) feed the UI's filter.
import { fetchSearchAttributesForNamespace } from '@temporalio/ui/services/search-attributes-service';
import { allSearchAttributes } from '@temporalio/ui/stores/search-attributes';

export async function load({ params, fetch }) {
  allSearchAttributes.set(await fetchSearchAttributesForNamespace(params.namespace, fetch));
}
