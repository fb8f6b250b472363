import type { RuleAccount } from './inputs';
import { checkTextLength } from './text-length';
import { violation, type Violation } from './violation';

/**
 * A comment reply's text (publishing-api.md "POST .../reply"): required, and within the same per-platform limit as a
 * post; the code is `validation_error` here (not `bad_request`). Its x link charge: `xLinkOutcome` with field `text`.
 */
export function checkReplyText(account: Pick<RuleAccount, 'platform' | 'premium'>, text: string | undefined): Violation[] {
  if (text === undefined || text.trim() === '') return [violation('validation_error', 'text is required for a reply')];
  const tooLong = checkTextLength(account, text, { field: 'text', hasMedia: false });
  return tooLong ? [violation('validation_error', tooLong.message)] : [];
}
