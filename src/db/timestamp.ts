/**
 * The one range of instants a client may send (`since`, the listing cursor, `schedule_at`, `expires_at`): a UTC year
 * from 0001 to 9999, the years `toISOString` writes with four digits. Checked after parsing, before a query:
 * PostgreSQL's `timestamptz` reaches back only to 4713 BC and node-pg writes a year before 1 as "BC", so luxon's
 * signed six-digit years (`-010000-01-01`) were a 500; a year past 9999 came back as `+010000-...`.
 */
export function isAcceptedInstant(at: Date): boolean {
  const year = at.getUTCFullYear();
  return year >= 1 && year <= 9999;
}

/** How a refusal of `isAcceptedInstant` reads, after the field's name or value. */
export const acceptedInstantRange = 'between the years 0001 and 9999 (UTC)';
