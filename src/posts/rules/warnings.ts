import type { z } from 'zod';
import type { WarningSchema } from '../post-view';
import type { RuleAccount } from './inputs';
import type { Notice, Violation } from './violation';

/** Warning entry of a draft response (publishing-api.md "Warning entry"); the schema is `WarningSchema` of `../post-view`. */
export type WarningEntry = z.infer<typeof WarningSchema>;

/**
 * A draft's warnings for one account: every violation with the code and message a send would give (without the
 * fan-out `Account <id>: ` prefix, since the entry names the account), then the notices.
 */
export function warningsFor(account: Pick<RuleAccount, 'id' | 'platform'>, findings: { violations: readonly Violation[]; notices: readonly Notice[] }): WarningEntry[] {
  return [...findings.violations, ...findings.notices].map((f) => ({
    account_id: account.id,
    platform: account.platform,
    code: f.code,
    message: f.message,
  }));
}
