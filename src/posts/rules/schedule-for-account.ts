import type { RuleAccount, RuleMode } from './inputs';
import { checkScheduleInFuture, checkScheduleSpacing, parseScheduleAt, scheduleInPastNotice } from './schedule';
import { toApiError, type Notice, type Violation } from './violation';

interface AccountSchedule {
  /** Null: publish now (no schedule_at). */
  scheduledAt: Date | null;
  violations: Violation[];
  notices: Notice[];
}

/**
 * `schedule_at` for one account: parsed in the request's `timezone` or the account's own (throws `bad_request` when it
 * is not a moment; drafts too, since a draft must remember a real time), then the future and 5-minute spacing rules
 * as findings (a draft only warns). `others`: the account's other scheduled times, without the posts that move with
 * this one.
 */
export function scheduleForAccount(
  input: { scheduleAt?: string; timezone?: string },
  account: Pick<RuleAccount, 'timezone'>,
  context: { mode: RuleMode; now: Date; others: readonly Date[] },
): AccountSchedule {
  if (input.scheduleAt === undefined) return { scheduledAt: null, violations: [], notices: [] };
  const parsed = parseScheduleAt({ scheduleAt: input.scheduleAt, timezone: input.timezone, accountTimezone: account.timezone });
  if (!parsed.ok) throw toApiError(parsed.violation);
  const violations: Violation[] = [];
  const notices: Notice[] = [];
  if (context.mode === 'draft') {
    const past = scheduleInPastNotice(parsed.instant, context.now);
    if (past) notices.push(past);
  } else {
    const past = checkScheduleInFuture(parsed.instant, context.now);
    if (past) violations.push(past);
  }
  const spacing = checkScheduleSpacing(parsed.instant, context.others);
  if (spacing) violations.push(spacing);
  return { scheduledAt: parsed.instant, violations, notices };
}
