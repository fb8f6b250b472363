import type { ConfigurationBlock, MediaSpelling, RuleAccount, RuleMode } from './inputs';
import { checkMediaContent, type MediaContent } from './media';
import { settleFindings } from './fan-out';
import type { WarningEntry } from './warnings';

/**
 * The second media check (Media rule 2: "again on real content type and size after download"), over every account
 * of a request before anything publishes: a send throws the first refusal (prefixed `Account <id>: ` in a fan-out),
 * a draft returns warnings. `lists` holds each media list the account publishes: one for a post, one per part for a
 * thread (`prefix: 'posts[1].'`), contents in the order the client named them.
 */
interface AccountMediaContents {
  account: RuleAccount;
  configuration: ConfigurationBlock | null;
  lists: ReadonlyArray<{ prefix?: string; spelling: MediaSpelling | null; contents: MediaContent[] }>;
}

export function validateMediaContents(entries: readonly AccountMediaContents[], options: { mode: RuleMode; fanOut: boolean }): WarningEntry[] {
  const checked = entries.map(({ account, configuration, lists }) => ({
    account,
    findings: {
      violations: lists.flatMap((list) => checkMediaContent(account.platform, configuration, list, list.prefix ?? '')),
      notices: [],
      xLinkBilled: [],
    },
  }));
  return settleFindings(checked, options);
}
