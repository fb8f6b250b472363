import type { ColumnType, Generated, Selectable } from 'kysely';
import type { Scope } from '../../auth/scopes';

interface ApiKeysTable {
  id: Generated<string>;
  user_id: string;
  name: string;
  /** The first characters of the secret (`hld_` + 8), shown in listings and used to find the row. */
  prefix: string;
  /** SHA-256 of the whole secret, hex. The secret itself is never stored. */
  key_hash: string;
  /** Null = full access. */
  scopes: Scope[] | null;
  expires_at: Date | null;
  revoked_at: Date | null;
  created_at: ColumnType<Date, Date | string | undefined, never>;
  last_used_at: Date | null;
}

export interface ApiKeysTables {
  api_keys: ApiKeysTable;
}

export type ApiKeyRow = Selectable<ApiKeysTable>;
