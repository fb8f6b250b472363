import { ApiError } from '../../errors';
import type { RuleAccount, RuleMode } from './inputs';
import type { AccountFindings } from './account-rules';
import { toApiError } from './violation';
import { warningsFor, type WarningEntry } from './warnings';

/**
 * Publishing-api.md "Responses" and Guarantee 7: every account's body is validated before anything publishes; the
 * first failure, in the order the accounts were named, refuses the whole request with its usual code and the message
 * prefixed `Account <id>: ` (only when the request named `account_ids`). A draft collects warnings instead.
 */
export function accountPrefix(account: Pick<RuleAccount, 'id'>, fanOut: boolean): string {
  return fanOut ? `Account ${account.id}: ` : '';
}

/** Send: throws the first violation (prefixed in a fan-out). Draft: every finding as a warning entry. */
export function settleFindings(
  checked: ReadonlyArray<{ account: RuleAccount; findings: AccountFindings }>,
  options: { mode: RuleMode; fanOut: boolean },
): WarningEntry[] {
  if (options.mode === 'draft') return checked.flatMap(({ account, findings }) => warningsFor(account, findings));
  for (const { account, findings } of checked) {
    const first = findings.violations[0];
    if (first) throw toApiError(first).prefixed(accountPrefix(account, options.fanOut));
  }
  return [];
}

/** Runs `check` for one account, prefixing any `ApiError` it throws. */
export function withAccountPrefix<T>(account: Pick<RuleAccount, 'id'>, fanOut: boolean, check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (err instanceof ApiError) throw err.prefixed(accountPrefix(account, fanOut));
    throw err;
  }
}
