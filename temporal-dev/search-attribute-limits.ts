// The real server's size check of a workflow's search attributes (`ValidateSize` of its search-attribute validator),
// with its default limits and its messages: a dev server that never checked let an application ship workflows a
// real cluster refuses.
import { SEARCH_ATTRIBUTE_LIMITS } from './limits';
import { encode, type Msg } from './proto';
import { mergeSearchAttributes } from './visibility';

/** Why these search attributes (`indexedFields`) exceed the limits, in the real server's words; null when they fit. */
export function searchAttributesSizeRefusal(indexedFields: Record<string, Msg> | undefined): string | null {
  if (!indexedFields) return null;
  for (const [name, payload] of Object.entries(indexedFields)) {
    const size: number = payload?.data?.length ?? 0;
    if (size > SEARCH_ATTRIBUTE_LIMITS.valueBytes) return `search attribute ${name} value size ${size} exceeds size limit ${SEARCH_ATTRIBUTE_LIMITS.valueBytes}`;
  }
  if (sizeBound(indexedFields) <= SEARCH_ATTRIBUTE_LIMITS.totalBytes) return null; // every start passes here: no encode
  const total = encode('temporal.api.common.v1.SearchAttributes', { indexedFields }).length;
  if (total > SEARCH_ATTRIBUTE_LIMITS.totalBytes) return `total size of search attributes ${total} exceeds size limit ${SEARCH_ATTRIBUTE_LIMITS.totalBytes}`;
  return null;
}

/**
 * At least the encoded size: the bytes of the names, metadata and data, plus more than the tags and length prefixes
 * of a map entry (at most 11 bytes with the payload's data prefix) and of a metadata entry (at most 10) can take.
 */
function sizeBound(indexedFields: Record<string, Msg>): number {
  let bytes = 0;
  for (const [name, payload] of Object.entries(indexedFields)) {
    bytes += 32 + Buffer.byteLength(name) + (payload?.data?.length ?? 0);
    for (const [key, value] of Object.entries<Uint8Array>(payload?.metadata ?? {})) bytes += 16 + Buffer.byteLength(key) + (value?.length ?? 0);
  }
  return bytes;
}

/**
 * The search attributes a run would have after these upserts, checked as the real server checks each upsert (the
 * run's attributes merged with the upserted ones); the first refusal, or null.
 */
export function upsertsSizeRefusal(current: Record<string, Msg>, upserts: ReadonlyArray<Record<string, Msg>>): string | null {
  const merged = { ...current };
  for (const fields of upserts) {
    mergeSearchAttributes(merged, fields);
    const refusal = searchAttributesSizeRefusal(merged);
    if (refusal) return refusal;
  }
  return null;
}
