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

/** What a workflow task's commands carry that the size limits apply to, in the order the server reads them. */
export type SizedCommand =
  | { kind: 'upsert'; fields: Record<string, Msg> }
  | { kind: 'startChild'; fields: Record<string, Msg> | undefined }
  | { kind: 'continueAsNew'; fields: Record<string, Msg> | undefined };

/**
 * The first of these commands the real server refuses for size, and why; null when all fit. An upsert is checked with
 * the run's attributes merged with it (and the upserts before it); a child start and a continue-as-new by the
 * attributes they give the new run, as its start would be (the real server terminates the workflow for any of them:
 * `terminateWorkflow` with `BAD_SEARCH_ATTRIBUTES`, `BAD_START_CHILD_EXECUTION_ATTRIBUTES`,
 * `BAD_CONTINUE_AS_NEW_ATTRIBUTES`).
 */
export function commandsSizeRefusal(current: Record<string, Msg>, commands: readonly SizedCommand[]): { kind: SizedCommand['kind']; refusal: string } | null {
  const merged = { ...current };
  for (const command of commands) {
    if (command.kind === 'upsert') mergeSearchAttributes(merged, command.fields);
    const refusal = searchAttributesSizeRefusal(command.kind === 'upsert' ? merged : command.fields);
    if (refusal) return { kind: command.kind, refusal };
  }
  return null;
}
