import { defineSignal, patched, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import type { SearchAttributePair } from '@temporalio/common';

/**
 * Sent to a running post, thread or group workflow that was started without Herald's search attributes (their
 * registration was refused then), once the registration succeeds: the workflow sets what the signal carries (read
 * from its rows by the sender), so the Web UI and `herald posts stuck` find it. Only a workflow can change its own
 * search attributes: Temporal has no client call for a running execution (README "Temporal Web UI").
 */
const searchAttributesRegistered = defineSignal<[SearchAttributePair[]]>('searchAttributesRegistered');

/**
 * Patch id, asked inside the handler when the signal arrives: a history where the signal reached code without this
 * handler (buffered, nothing upserted) replays without an upsert; one that ran it replays its marker and the upsert.
 * Registering the handler is no command, so histories without the signal replay as they were.
 */
const UPSERTS_REGISTERED_SEARCH_ATTRIBUTES = 'upserts-registered-search-attributes';

/** Listens for `searchAttributesRegistered` (called first thing by `publishPost`, `publishThread`, `publishGroup`). */
export function listenForSearchAttributes(): void {
  setHandler(searchAttributesRegistered, (pairs) => {
    if (pairs.length > 0 && patched(UPSERTS_REGISTERED_SEARCH_ATTRIBUTES)) upsertSearchAttributes(pairs);
  });
}
