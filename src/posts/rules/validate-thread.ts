import { checkAccountThread } from './account-rules';
import type { AccountThreadBody, RuleMode } from './inputs';
import type { CreateThreadBody } from './request-schemas';
import { resolveAccountThread } from './resolve-account-body';
import { checkCreateThreadStructure } from './structure';
import { throwFirst } from './violation';
import { checkDraftTexts, runAccounts, type RequestContext, type RequestValidation } from './validate-post';

/**
 * Everything `POST /api/v1/threads` checks that needs no I/O: body structure (`posts[0].text is required`), draft
 * text ceiling per part, timezone, then per account: story/reel refused, at least two parts (a draft may have one),
 * each part's text and media, the thread's first comment (published under the last part), x links per part.
 */
export function validateThreadRequest(body: CreateThreadBody, context: RequestContext): RequestValidation<AccountThreadBody> {
  const mode: RuleMode = body.draft === true ? 'draft' : 'send';
  throwFirst(checkCreateThreadStructure(body));
  if (mode === 'draft') throwFirst(checkDraftTexts(body.posts.map((part, i) => ({ field: `posts[${i}].text`, text: part.text }))));
  return runAccounts(
    { mode, fanOut: body.account_ids !== undefined, configuration: body.configuration, scheduleAt: body.schedule_at, timezone: body.timezone },
    context,
    (account) => {
      const thread = resolveAccountThread(body, account);
      return { body: thread, findings: checkAccountThread(account, context.plan, thread) };
    },
  );
}
