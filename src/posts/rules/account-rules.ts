import { capabilities } from '../../platforms/capabilities';
import { checkConfigurationBlock, checkSinglePostContent, checkThreadPlacement } from './configuration';
import { checkFirstComment } from './first-comment';
import type { AccountBody, AccountThreadBody, MediaRef, MediaSpelling, RuleAccount, RulePlan } from './inputs';
import { checkRequestedMedia, mediaRequired } from './media';
import { checkTextLength } from './text-length';
import { notice, violation, type Notice, type Violation } from './violation';
import { xLinkOutcome, type XLinkItem } from './x-link-policy';

/**
 * Every rule that depends on the account, for one account's post or thread, in the order a send reports them:
 * configuration, story/reel content, text, media, first comment, x link policy. A send refuses on the first
 * violation; a draft shows all of them, and the notices, as warnings.
 */
export interface AccountFindings {
  violations: Violation[];
  /** Changes a draft should know about (`thread_not_native`, `x_link_post_billed`); never refusals. */
  notices: Notice[];
  /** Fields whose publication carries the x link-post charge (paid plans). */
  xLinkBilled: string[];
}

function checkPostContent(
  account: RuleAccount,
  content: { text: string; media: MediaRef[]; mediaSpelling: MediaSpelling | null },
  block: AccountBody['configuration'],
  prefix: string,
): Violation[] {
  const out: Violation[] = [];
  // Where media is required the media rule says so; elsewhere an empty post has nothing to publish.
  if (content.text.trim() === '' && content.media.length === 0 && !mediaRequired(account.platform, block)) {
    out.push(violation('bad_request', `${prefix}text is empty and the post has no media; there is nothing to publish`));
  }
  const tooLong = checkTextLength(account, content.text, { field: `${prefix}text`, hasMedia: content.media.length > 0 });
  if (tooLong) out.push(tooLong);
  out.push(...checkRequestedMedia(account.platform, block, { refs: content.media, spelling: content.mediaSpelling }, prefix));
  return out;
}

export function checkAccountPost(account: RuleAccount, plan: RulePlan, body: AccountBody): AccountFindings {
  const violations = [
    ...checkConfigurationBlock(account.platform, body.configuration),
    ...checkSinglePostContent(account.platform, body.configuration, body),
    ...checkPostContent(account, body, body.configuration, ''),
    ...checkFirstComment(account, body.firstComment),
  ];
  const items: XLinkItem[] = [{ field: 'text', text: body.text }];
  if (body.firstComment !== null) items.push({ field: 'first_comment', text: body.firstComment });
  const links = xLinkOutcome(account, plan, items);
  return { violations: [...violations, ...links.violations], notices: links.notices, xLinkBilled: links.billed };
}

export function checkAccountThread(account: RuleAccount, plan: RulePlan, thread: AccountThreadBody): AccountFindings {
  const violations = [...checkConfigurationBlock(account.platform, thread.configuration), ...checkThreadPlacement(account.platform, thread.configuration)];
  if (thread.parts.length < 2) {
    violations.push(violation('bad_request', `A thread needs at least two parts; got ${thread.parts.length}`));
  }
  thread.parts.forEach((part, index) => violations.push(...checkPostContent(account, part, thread.configuration, `posts[${index}].`)));
  violations.push(...checkFirstComment(account, thread.firstComment));

  const items: XLinkItem[] = thread.parts.map((part, index) => ({ field: `posts[${index}].text`, text: part.text }));
  if (thread.firstComment !== null) items.push({ field: 'first_comment', text: thread.firstComment });
  const links = xLinkOutcome(account, plan, items);
  const notices = capabilities[account.platform].nativeThreads
    ? []
    : [notice('thread_not_native', `${account.platform} has no reply chain; each of the ${thread.parts.length} parts publishes as a standalone post`)];
  return { violations: [...violations, ...links.violations], notices: [...notices, ...links.notices], xLinkBilled: links.billed };
}
