import { xLinkPostPriceCents } from '../../plans';
import type { RuleAccount, RulePlan } from './inputs';
import { extractLinks } from './links';
import { notice, violation, type Notice, type Violation } from './violation';

/**
 * The x link-post rule (publishing-api.md "Quota and cost", Limits): an x post, reply or first comment whose text
 * contains a link is refused on Free (402 `x_link_posts_require_paid_plan`, before anything is published) and billed
 * on paid plans; accounts connected with the user's own X API credentials are exempt. Each item is charged on its own.
 */

/** One text that would be published on x: `text`, `posts[1].text`, `first_comment`. */
export interface XLinkItem {
  field: string;
  text: string;
}

interface XLinkOutcome {
  /** Free plan: the refusal a send answers with (a draft shows it as a warning). */
  violations: Violation[];
  /** Paid plans, drafts: one `x_link_post_billed` warning per billed item. */
  notices: Notice[];
  /** Paid plans: the fields whose publication the service records a link-post charge for. */
  billed: string[];
}

const price = `$${(xLinkPostPriceCents / 100).toFixed(2)}`;

export function xLinkOutcome(account: Pick<RuleAccount, 'platform' | 'own_credentials'>, plan: RulePlan, items: readonly XLinkItem[]): XLinkOutcome {
  const outcome: XLinkOutcome = { violations: [], notices: [], billed: [] };
  if (account.platform !== 'x' || account.own_credentials) return outcome;
  for (const item of items) {
    const link = extractLinks(item.text)[0];
    if (!link) continue;
    if (plan.xLinkPosts === 'refused') {
      outcome.violations.push(
        violation(
          'x_link_posts_require_paid_plan',
          `${item.field} contains a link (${link.url}); x posts, replies and first comments with links need a paid plan or an account connected with your own X API credentials`,
        ),
      );
    } else {
      outcome.billed.push(item.field);
      outcome.notices.push(
        notice('x_link_post_billed', `${item.field} contains a link (${link.url}); publishing it on x is billed ${price} on top of the monthly quota`),
      );
    }
  }
  return outcome;
}
