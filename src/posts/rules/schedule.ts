import { DateTime, IANAZone } from 'luxon';
import { acceptedInstantRange, isAcceptedInstant } from '../../db/timestamp';
import { SCHEDULE_SPACING_MINUTES } from '../../platforms/capabilities';
import { notice, violation, type Notice, type Violation } from './violation';

/**
 * `schedule_at` and `timezone` (publishing-api.md "Body fields"). Pure: `now` is a parameter.
 *
 * - An instant with `Z` or an offset is taken as written and normalised to UTC (millisecond precision; finer digits
 *   are dropped). `timezone` is then ignored but still validated.
 * - A local time (no offset) is read in `timezone`, else the account's saved timezone, with the daylight-saving rules
 *   of the date named. A wall time skipped by a spring-forward gap is refused; a wall time that occurs twice
 *   (fall back) is the FIRST occurrence (the earlier instant, still on daylight time).
 * - A date and time are required; `T` or one space may separate them. Hour 24, day 30 of February, hour 25 and
 *   other moments that are not real are refused. Relative offsets (`+30m`, `PT30M`, `now+1h`) are refused.
 * - An offset is what RFC 3339 spells (`time-numoffset`): hours 00 to 23, minutes 00 to 59. Luxon takes `+05:99` and
 *   `+25:00` and moves the instant by them, so they are refused here as not real moments.
 */

const offsetSuffix = /(?:[zZ]|[+-]\d{2}(?::?\d{2})?)$/;
const numericOffset = /[+-](\d{2})(?::?(\d{2}))?$/;
const relativeForm = /^(?:now\s*)?[+-]\s*\d+\s*[a-z]*$|^P(?:\d|T)/i;
const dateTimeForm = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(?:[zZ]|[+-]\d{2}(?::?\d{2})?)?$/;
const fixedOffsetZone = /^(?:(?:Etc\/)?(?:GMT|UTC|UT)\s*)?[+-]\s*\d/i;

/**
 * `timezone` must name an IANA zone (`Europe/Berlin`, `UTC`, and the database's own fixed zones such as `Etc/GMT-2`);
 * an offset written as one (`+02:00`, `UTC+2`, `GMT-05:00`) is refused as such, even where `Intl` would take it.
 */
export function checkTimezone(timezone: string): Violation | null {
  const name = timezone.trim();
  if (/^[+-]/.test(name) || (fixedOffsetZone.test(name) && !IANAZone.isValidZone(name))) {
    return violation('bad_request', `timezone must be an IANA time zone name such as Europe/Berlin; a fixed offset (${timezone}) is not accepted`);
  }
  if (!IANAZone.isValidZone(timezone)) {
    return violation('bad_request', `timezone ${timezone} is not an IANA time zone name (for example Europe/Berlin or America/New_York)`);
  }
  return null;
}

interface ScheduleInput {
  scheduleAt: string;
  /** The request's `timezone` (already checked with `checkTimezone`, or checked here). */
  timezone?: string;
  /** The account's saved timezone, used when the request gives none. */
  accountTimezone?: string | null;
}

type ScheduleParse = { ok: true; instant: Date; iso: string; zone: string | null } | { ok: false; violation: Violation };

const refuse = (message: string): ScheduleParse => ({ ok: false, violation: violation('bad_request', message) });

/** Turns `schedule_at` into an instant, or says why it is not one. Does not look at `now`. */
export function parseScheduleAt(input: ScheduleInput): ScheduleParse {
  const raw = input.scheduleAt.trim();
  if (input.timezone !== undefined) {
    const tz = checkTimezone(input.timezone);
    if (tz) return { ok: false, violation: tz };
  }
  if (relativeForm.test(raw)) {
    return refuse(`schedule_at must be an ISO 8601 date and time; relative offsets like ${raw} are not accepted`);
  }
  const parts = dateTimeForm.exec(raw);
  if (!parts) {
    return refuse(`schedule_at ${raw} is not an ISO 8601 date and time (for example 2026-05-01T09:30:00Z or 2026-05-01T09:30 with a timezone)`);
  }
  const [, year, month, day, hour, minute, second = '0', fraction = ''] = parts;
  const wall = {
    year: Number(year), month: Number(month), day: Number(day),
    hour: Number(hour), minute: Number(minute), second: Number(second),
    millisecond: Number(fraction.slice(0, 3).padEnd(3, '0')),
  };
  const calendar = DateTime.fromObject(wall, { zone: 'UTC' });
  if (!calendar.isValid || wall.hour > 23) return refuse(`schedule_at ${raw} is not a real moment`);

  if (offsetSuffix.test(raw)) {
    const offset = numericOffset.exec(raw);
    if (offset && (Number(offset[1]) > 23 || Number(offset[2] ?? '0') > 59)) return refuse(`schedule_at ${raw} is not a real moment`);
    const withOffset = DateTime.fromISO(raw.replace(' ', 'T'), { setZone: true });
    if (!withOffset.isValid) return refuse(`schedule_at ${raw} is not a real moment`);
    return done(withOffset, null, raw);
  }
  const zoneName = input.timezone ?? input.accountTimezone ?? null;
  if (zoneName === null) {
    return refuse(`schedule_at ${raw} has no offset and no timezone applies; add Z or an offset, send timezone, or set the account's timezone`);
  }
  const zone = IANAZone.create(zoneName);
  if (!zone.isValid) return refuse(`the account's timezone ${zoneName} is not a valid IANA time zone; send timezone`);
  const instant = firstInstantOfWallTime(calendar.toMillis(), zone);
  if (instant === null) {
    return refuse(`schedule_at ${raw} does not exist in ${zoneName}: the clocks skip that time (daylight saving)`);
  }
  return done(DateTime.fromMillis(instant, { zone: 'UTC' }), zoneName, raw);
}

/**
 * `wallMillis` is the wall time written as if it were UTC. An instant matches when the zone's offset at that instant
 * maps it back to the same wall time. Offsets a day either side cover every transition.
 */
function firstInstantOfWallTime(wallMillis: number, zone: IANAZone): number | null {
  const day = 24 * 60 * 60 * 1000;
  const offsets = new Set([zone.offset(wallMillis - day), zone.offset(wallMillis), zone.offset(wallMillis + day)]);
  const matches = [...offsets]
    .map((offsetMinutes) => wallMillis - offsetMinutes * 60_000)
    .filter((instant) => zone.offset(instant) * 60_000 === wallMillis - instant);
  return matches.length === 0 ? null : Math.min(...matches);
}

function done(dt: DateTime, zone: string | null, raw: string): ScheduleParse {
  // Four written digits still reach year 0 or 10000 through an offset or a zone.
  if (!isAcceptedInstant(dt.toJSDate())) return refuse(`schedule_at ${raw} must be ${acceptedInstantRange}`);
  const iso = dt.toUTC().toISO({ suppressMilliseconds: false }) ?? '';
  return { ok: true, instant: dt.toJSDate(), iso, zone };
}

/** A send needs a time strictly after `now`. */
export function checkScheduleInFuture(instant: Date, now: Date): Violation | null {
  if (instant.getTime() > now.getTime()) return null;
  return violation('bad_request', `schedule_at ${instant.toISOString()} is in the past; give a future time`);
}

/** A draft keeps a time that has passed and says so. */
export function scheduleInPastNotice(instant: Date, now: Date): Notice | null {
  if (checkScheduleInFuture(instant, now) === null) return null;
  return notice(
    'schedule_at_in_past',
    `schedule_at ${instant.toISOString()} has already passed; promote the draft with a new schedule_at or publish: true`,
  );
}

const spacingRule = `scheduled posts on one account must be at least ${SCHEDULE_SPACING_MINUTES} minutes apart`;

/**
 * Scheduled posts of one account must be at least 5 minutes apart. `others`: the account's other scheduled times
 * (the caller leaves out the posts being rescheduled together, such as the parts of the same thread). The refusal
 * passes once the other post moves or goes (`passes`): an Idempotency-Key does not replay it.
 */
export function checkScheduleSpacing(instant: Date, others: readonly Date[]): Violation | null {
  const { after, before } = spacingWindowOf(instant);
  const clash = others.find((other) => other > after && other < before);
  if (clash === undefined) return null;
  return violation(
    'bad_request',
    `schedule_at ${instant.toISOString()} is within ${SCHEDULE_SPACING_MINUTES} minutes of another scheduled post on this account (${clash.toISOString()}); ${spacingRule}`,
    { passes: true },
  );
}

/** The same rule's refusal when only the database saw the clash, with a post written at the same moment (`againOnSpacingClash`). */
export function spacingClashViolation(): Violation {
  return violation('bad_request', `schedule_at is within ${SCHEDULE_SPACING_MINUTES} minutes of another post scheduled on the same account at the same moment; ${spacingRule}`, { passes: true });
}

/** The instants strictly between which another scheduled post of the account breaks `instant`'s spacing. */
function spacingWindowOf(instant: Date): { after: Date; before: Date } {
  const spacing = SCHEDULE_SPACING_MINUTES * 60_000;
  return { after: new Date(instant.getTime() - spacing), before: new Date(instant.getTime() + spacing) };
}

/**
 * Where a create or a reschedule must read each account's other scheduled posts for the spacing rule: the window
 * around `schedule_at` as `scheduleForAccount` will parse it for that account (the request's timezone, else the
 * account's). Only posts inside it can clash, so only those are read, not every scheduled post of the account. An
 * account for which `schedule_at` does not parse gets none (the validation refuses the request).
 */
export function spacingWindowsOf(
  input: { scheduleAt: string; timezone?: string },
  accounts: ReadonlyArray<{ id: string; timezone: string | null }>,
): Array<{ accountId: string; after: Date; before: Date }> {
  return accounts.flatMap((account) => {
    const parsed = parseScheduleAt({ scheduleAt: input.scheduleAt, timezone: input.timezone, accountTimezone: account.timezone });
    return parsed.ok ? [{ accountId: account.id, ...spacingWindowOf(parsed.instant) }] : [];
  });
}
