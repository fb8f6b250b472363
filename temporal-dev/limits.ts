// Temporal's default limits that an application must keep within, as plain numbers (no imports: Herald reads them
// to keep its workflows within a real cluster's defaults without loading the server).

/**
 * A workflow's search attributes: each value's payload data at most `valueBytes` (dynamic config
 * `frontend.searchAttributesSizeOfValueLimit`, default 2 KiB) and the encoded `SearchAttributes` message at most
 * `totalBytes` (`frontend.searchAttributesTotalSizeLimit`, default 40 KiB). A start or signal-with-start beyond
 * them is refused with INVALID_ARGUMENT; an upsert beyond them fails its workflow task and terminates the workflow.
 */
export const SEARCH_ATTRIBUTE_LIMITS = { valueBytes: 2 * 1024, totalBytes: 40 * 1024 } as const;
