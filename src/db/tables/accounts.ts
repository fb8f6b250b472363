import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';
import type { PlatformSlug } from '../../platforms/types';

export type InactiveReason = 'disconnected' | 'deactivated' | 'connection_lost' | 'reauthorization_required';

interface AccountsTable {
  id: Generated<string>;
  user_id: string;
  platform: PlatformSlug;
  platform_account_id: string;
  username: string;
  display_name: string | null;
  profile_url: string | null;
  via: 'instagram' | 'facebook' | null;
  kind: 'profile' | 'page' | null;
  own_credentials: Generated<boolean>;
  premium: Generated<boolean>;
  active: Generated<boolean>;
  inactive_reason: InactiveReason | null;
  timezone: string | null;
  /** AES-256-GCM sealed JSON of the credentials (user id bound as context); null once disconnected (wiped). */
  credentials_sealed: string | null;
  settings: ColumnType<Record<string, string>, string | undefined, string>;
  /** When the credential ends; null where it does not (migration 0075). */
  credential_expires_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** When the stored token's lifetime began; null when unknown (renewed at once where it can be). */
  credential_issued_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /**
   * The latest platform-call refusal of the credential recorded for the account (`recordCallRefusal`, migration 0288):
   * read with the row, it tells a successful call there is a held refusal to end; null when none is.
   */
  credential_refused_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  created_at: ColumnType<Date, Date | string | undefined, never>;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

/** An account whose renewal a platform refused for good lately (migration 0275, `src/accounts/mass-refusal.ts`). */
interface CredentialRefusalsTable {
  account_id: string;
  platform: PlatformSlug;
  refused_at: ColumnType<Date, Date | string | undefined, Date | string>;
  /** Set by `herald credentials release`: the account's next refusal is marked lost, and this one counts no more. */
  released_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** When the account's current run of call refusals began (migration 0284; `recordCallRefusal`). */
  first_refused_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export interface AccountsTables {
  accounts: AccountsTable;
  credential_refusals: CredentialRefusalsTable;
}

export type AccountRow = Selectable<AccountsTable>;
export type NewAccountRow = Insertable<AccountsTable>;
export type AccountUpdate = Updateable<AccountsTable>;
