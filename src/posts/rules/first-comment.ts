import { capabilities, firstCommentPlatforms } from '../../platforms/capabilities';
import type { RuleAccount } from './inputs';
import { checkTextLength } from './text-length';
import { listWords, violation, type Violation } from './violation';

/**
 * First comment rules 1 and 2 (publishing-api.md): only platforms that take one (400 `first_comment_unsupported`
 * naming the platform and those that do; never dropped silently), and no longer than the account's own post limit.
 * Stories and reels: `checkSinglePostContent`. Link charge: `x-link-policy.ts`.
 */
export function checkFirstComment(account: Pick<RuleAccount, 'platform' | 'premium'>, firstComment: string | null): Violation[] {
  if (firstComment === null) return [];
  if (!capabilities[account.platform].firstComment) {
    return [
      violation(
        'first_comment_unsupported',
        `first_comment is not supported on ${account.platform}; only ${listWords(firstCommentPlatforms)} accept one`,
      ),
    ];
  }
  const tooLong = checkTextLength(account, firstComment, { field: 'first_comment', hasMedia: false });
  return tooLong ? [tooLong] : [];
}
