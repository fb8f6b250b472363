import { z } from 'zod';
import type { AccountRow } from '../db/tables/accounts';
import { platformSlugs } from '../platforms/types';

/** The account object of decisions.md ("Accounts"): its zod schema (for OpenAPI) and the one mapping from a row. */

const inactiveReasons = ['disconnected', 'deactivated', 'connection_lost', 'reauthorization_required'] as const;

export const AccountSchema = z
  .object({
    id: z.string(),
    platform: z.enum(platformSlugs),
    username: z.string().meta({ description: 'As the platform shows it (@channel for telegram, user@server for mastodon)' }),
    display_name: z.string().nullable(),
    profile_url: z.string().nullable(),
    via: z.enum(['instagram', 'facebook']).nullable().meta({ description: 'instagram only: how it was connected; null elsewhere' }),
    kind: z.enum(['profile', 'page']).nullable().meta({ description: 'Where it matters (linkedin, facebook); null elsewhere' }),
    own_credentials: z.boolean().meta({ description: 'x only: connected with your own X API credentials; false elsewhere' }),
    premium: z.boolean().meta({ description: 'x only: a premium account (25,000 characters); false elsewhere' }),
    active: z.boolean(),
    inactive_reason: z.enum(inactiveReasons).nullable().meta({
      description:
        'reauthorization_required: a platform withheld a comment permission; comment actions answer 409 until reconnected, and the account stays active for posting unless switched off (switching it on again then needs a reconnect)',
    }),
    timezone: z.string().nullable().meta({ description: 'IANA name; read by schedule_at without an offset' }),
    credential_expires_at: z.string().nullable().meta({
      description: 'ISO 8601, UTC: when the current credential ends (Herald renews renewable ones before then); null where it does not expire',
    }),
    created_at: z.string().meta({ description: 'ISO 8601, UTC' }),
  })
  .meta({ id: 'Account' });

type AccountView = z.infer<typeof AccountSchema>;

export function toAccountView(row: AccountRow): AccountView {
  return {
    id: row.id,
    platform: row.platform,
    username: row.username,
    display_name: row.display_name,
    profile_url: row.profile_url,
    via: row.platform === 'instagram' ? row.via : null,
    kind: row.kind,
    own_credentials: row.platform === 'x' && row.own_credentials,
    premium: row.platform === 'x' && row.premium,
    active: row.active,
    inactive_reason: row.inactive_reason,
    timezone: row.timezone,
    credential_expires_at: row.credential_expires_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
  };
}
