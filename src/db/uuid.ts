/** Whether `id` is a UUID as PostgreSQL's `uuid` type accepts it: checked before a query, so a malformed id is a 404, not a database error. */
export function isUuid(id: string): boolean {
  return uuidPattern.test(id);
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids for an `in (...)` condition: an empty list is not valid SQL there, so it becomes the nil UUID, which no row has. */
export function idsOrNone(ids: readonly string[]): readonly string[] {
  return ids.length ? ids : ['00000000-0000-0000-0000-000000000000'];
}
