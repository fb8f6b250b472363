import type { AccountRow } from '../../db/tables/accounts';
import type { XLinkPostPolicy } from '../../plans';

/** The account columns the rules read. Pass the account row as it is. */
export type RuleAccount = Pick<AccountRow, 'id' | 'platform' | 'premium' | 'own_credentials' | 'via' | 'kind' | 'timezone'>;

/** The user's plan as the rules need it: `plans[name].xLinkPosts` (or `effectiveLimits(...).xLinkPosts`). */
export interface RulePlan {
  xLinkPosts: XLinkPostPolicy;
}

/** `send`: the first violation refuses the request. `draft`: violations become warnings and the save goes on. */
export type RuleMode = 'send' | 'draft';

/** One media item as the client named it, whatever spelling it used. */
export type MediaRef = { id: string; alt?: string } | { url: string; alt?: string };

/** Which spelling a media list came in (kept so the service can store and echo it). */
export type MediaSpelling = 'media' | 'media_ids' | 'media_urls';

/** A media list: the client sent this spelling with these items (`[]` = no media, which on update removes it). */
export interface MediaSelection {
  spelling: MediaSpelling;
  items: MediaRef[];
}

/** One part of a thread for one account. */
export interface ThreadPartBody {
  text: string;
  media: MediaRef[];
  mediaSpelling: MediaSpelling | null;
}

/** A thread for one account: its parts, the thread's first comment (under the last part) and its block. */
export interface AccountThreadBody {
  accountId: string;
  parts: ThreadPartBody[];
  firstComment: string | null;
  configuration: ConfigurationBlock | null;
}

/** The platform block of `configuration` (for example `{ placement: 'story' }`). */
export type ConfigurationBlock = Record<string, unknown>;

/** What one account will publish, after `account_configurations` overrides (see `resolve-account-body.ts`). */
export interface AccountBody {
  accountId: string;
  text: string;
  media: MediaRef[];
  /** The spelling the media came in; null when none was sent at any level. */
  mediaSpelling: MediaSpelling | null;
  /** Null: no first comment. */
  firstComment: string | null;
  /** The block for this account's platform, or null (plain feed post). */
  configuration: ConfigurationBlock | null;
}
