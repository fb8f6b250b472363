import { z } from 'zod';
import type { RuleAccount } from './inputs';
import type { Notice, Violation } from './violation';

/** Warning entry of a draft response (publishing-api.md "Warning entry"). */
export const WarningEntrySchema = z
  .object({
    account_id: z.string(),
    platform: z.string(),
    code: z.string().describe('An error code the send would answer with, or thread_not_native, x_link_post_billed, schedule_at_in_past'),
    message: z.string(),
  })
  .meta({ id: 'DraftWarning' });
export type WarningEntry = z.infer<typeof WarningEntrySchema>;

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
