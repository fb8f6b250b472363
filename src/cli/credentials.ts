import { z } from 'zod';
import { heldRefusals, releaseHeldRefusals } from '../accounts/mass-refusal';
import { platformSlugs } from '../platforms/types';
import { flags, parse, UsageError, uuid, type Command } from './args';

/**
 * `herald credentials ...` (README "Credentials" and "Operator command"): the refusals Herald holds back rather than
 * losing the connections (the mass-loss guard's renewals, and call refusals nothing could renew, on any platform;
 * `src/accounts/mass-refusal.ts`). `held` lists them and changes nothing; `release` takes them as real.
 */

export const credentialsUsage = `  herald credentials held [--platform <${platformSlugs.join('|')}>]
  herald credentials release --platform <${platformSlugs.join('|')}> [--account ID]`;

const platform = z.enum(platformSlugs, { error: `--platform must be one of ${platformSlugs.join(', ')}` });

export const credentialsCommands: Record<string, Command> = {
  // The refusals held back now, oldest first, with each platform's counts (refused in the last hour, renewed in it).
  'credentials held': async (args, connect) => {
    const input = parse(z.object({ platform: platform.optional() }), flags(args, ['platform']));
    const { handle } = await connect();
    const { held, counts } = await heldRefusals(handle.db, input.platform);
    return {
      held: held.map((r) => ({ account_id: r.account_id, platform: r.platform, first_refused_at: r.first_refused_at.toISOString(), refused_at: r.refused_at.toISOString() })),
      counts,
    };
  },

  // The held refusals judged real by the operator: each such account's next refusal loses the connection. Lists the
  // accounts released.
  'credentials release': async (args, connect) => {
    const f = flags(args, ['platform', 'account']);
    if (f.platform === undefined) throw new UsageError('--platform is required');
    const input = parse(z.object({ platform, account: uuid('--account').optional() }), f);
    const { handle } = await connect();
    const released = await releaseHeldRefusals(handle.db, input.platform, input.account);
    return { platform: input.platform, released: released.map((r) => ({ account_id: r.account_id, refused_at: r.refused_at.toISOString() })) };
  },
};
