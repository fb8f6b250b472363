import type { Client } from '@temporalio/client';
import pino from 'pino';
import { z } from 'zod';
import { createApiKey, revokeApiKey } from '../auth/api-keys';
import { scopes } from '../auth/scopes';
import { ConfigError, loadConfig } from '../config';
import { connectDatabase, type Connected } from '../db/connect';
import { MigrationError, migrateToLatest, migrationState } from '../db/migrate';
import { runningEmbeddedTemporal } from '../db/single-herald';
import { acceptedInstantRange, isAcceptedInstant } from '../db/timestamp';
import { createLogger } from '../logger';
import { findStuckPosts } from '../posts/stuck';
import { runningWebUiUrl, webUiPostLink } from '../temporal/web-ui';
import { type CustomQuotas, type PlanName, planNames, plans } from '../plans';
import { createUser, findUser, setPlan } from '../users/users';
import { CommandError, flags, parse, UsageError, uuid, type Command } from './args';
import { credentialsCommands, credentialsUsage } from './credentials';

/**
 * `herald`, the operator command (decisions.md "Operator command"). JSON on stdout; errors on stderr with a
 * non-zero exit (1: the command failed, 2: it was used wrongly). Works against the database `npm start` uses: the
 * embedded cluster under the data dir (named on stderr) is joined when running, started when not, and stopped at the
 * end unless another process is connected to it (`EmbeddedCluster.leave`).
 */

const usage = `usage:
  herald users create --plan <${planNames.join('|')}> [--email E]
  herald users set-plan --user ID --plan P [--post-quota N] [--scheduled-quota N] [--account-limit N]
                        [--comment-sync-quota N] [--x-comment-read-quota N]
  herald keys create --user ID [--name NAME] [--scopes posts:read,posts:write] [--expires-at ISO]
  herald keys revoke --key-id ID
  herald migrate
${credentialsUsage}
  herald posts stuck [--older-than SECONDS]   (without TEMPORAL_ADDRESS: judge from the database alone, overdue by
                                              more than this; default: ask the running Herald's Temporal, else 300)
  herald temporal-dev [--port N] [--time-skipping] [--host H] [--namespace NS] [--http-port N]`;

const plan = z.enum(planNames, { error: `--plan must be one of ${planNames.join(', ')}` });
const count = (flag: string) =>
  z
    .string()
    .regex(/^\d{1,9}$/, `${flag} must be a non-negative integer`)
    .transform(Number)
    .optional();

/** The numbers a plan may leave custom, each with its `set-plan` flag and whether `plan` leaves it custom. */
function customNumbersOf(planName: PlanName): Array<{ flag: string; column: keyof CustomQuotas; custom: boolean; planValue: number | null }> {
  const target = plans[planName];
  return (
    [
      ['--post-quota', 'post_quota', target.postsPerMonth],
      ['--scheduled-quota', 'scheduled_quota', target.scheduledPerMonth],
      ['--account-limit', 'account_limit', target.accounts],
      ['--comment-sync-quota', 'comment_sync_quota', target.commentSyncsPerMonth],
      ['--x-comment-read-quota', 'x_comment_read_quota', target.xCommentReadsPerMonth],
    ] as const
  ).map(([flag, column, planValue]) => ({ flag, column, custom: planValue === null, planValue }));
}

/**
 * A custom number never set counts as 0, nothing allowed (README "Plans and quotas": fail closed); the operator who
 * just gave a user such a plan is told which, or the user's first scheduled post is refused as over "0 of 0".
 */
function warnOfUnsetCustomNumbers(planName: PlanName, user: CustomQuotas, userId: string): void {
  const unset = customNumbersOf(planName).filter(({ custom, column }) => custom && user[column] === null);
  if (!unset.length) return;
  const flagsToSet = unset.map(({ flag }) => `${flag} N`).join(' ');
  process.stderr.write(
    `herald: warning: ${planName} leaves ${unset.map(({ flag }) => flag.slice(2)).join(', ')} custom and they are unset, so each counts as 0` +
      ` (nothing allowed) until set: herald users set-plan --user ${userId} --plan ${planName} ${flagsToSet}\n`,
  );
}

/**
 * What `set-plan` prints: each number as it applies to the user, the plan's own where the plan fixes it (a custom
 * number kept on the row from an earlier plan applies to nothing and is not shown), the row's where the plan leaves it
 * custom (null while unset: it counts as 0, and the warning says so), "unlimited" for the plan's Infinity.
 */
function numbersThatApply(planName: PlanName, user: CustomQuotas): Record<keyof CustomQuotas, number | 'unlimited' | null> {
  const shown = {} as Record<keyof CustomQuotas, number | 'unlimited' | null>;
  for (const { column, custom, planValue } of customNumbersOf(planName)) {
    shown[column] = custom ? user[column] : planValue === Infinity ? 'unlimited' : planValue;
  }
  return shown;
}

const commands: Record<string, Command> = {
  ...credentialsCommands,
  'users create': async (args, connect) => {
    const f = flags(args, ['plan', 'email']);
    if (f.plan === undefined) throw new UsageError('--plan is required');
    const input = parse(
      z.object({ plan, email: z.email({ error: '--email must be an email address' }).optional() }),
      f,
    );
    const { handle } = await connect();
    const { user, apiKey } = await handle.db.transaction().execute(async (trx) => {
      const user = await createUser(trx, { plan: input.plan, email: input.email ?? null }).catch((err: { code?: string }) => {
        if (err.code === '23505') throw new CommandError(`a user with email ${input.email} already exists`);
        throw err;
      });
      return { user, ...(await createApiKey(trx, { userId: user.id, name: 'default', scopes: null, expiresAt: null })) };
    });
    warnOfUnsetCustomNumbers(input.plan, user, user.id);
    return { user_id: user.id, api_key: apiKey };
  },

  'users set-plan': async (args, connect) => {
    const f = flags(args, ['user', 'plan', 'post-quota', 'scheduled-quota', 'account-limit', 'comment-sync-quota', 'x-comment-read-quota']);
    if (f.user === undefined) throw new UsageError('--user is required');
    if (f.plan === undefined) throw new UsageError('--plan is required');
    const input = parse(
      z.object({
        user: uuid('--user'),
        plan,
        'post-quota': count('--post-quota'),
        'scheduled-quota': count('--scheduled-quota'),
        'account-limit': count('--account-limit'),
        'comment-sync-quota': count('--comment-sync-quota'),
        'x-comment-read-quota': count('--x-comment-read-quota'),
      }),
      f,
    );
    const custom: Partial<CustomQuotas> = {};
    for (const { flag, column, custom: isCustom } of customNumbersOf(input.plan)) {
      const given = input[flag.slice(2) as keyof typeof input] as number | undefined;
      if (given === undefined) continue;
      if (!isCustom) throw new UsageError(`${flag} applies only where the plan's number is custom; ${input.plan} fixes it`);
      custom[column] = given;
    }
    const { handle } = await connect();
    const user = await setPlan(handle.db, input.user, input.plan, custom);
    if (!user) throw new CommandError(`user ${input.user} not found`);
    warnOfUnsetCustomNumbers(input.plan, user, user.id);
    return { user_id: user.id, plan: user.plan, ...numbersThatApply(input.plan, user) };
  },

  'keys create': async (args, connect) => {
    const f = flags(args, ['user', 'name', 'scopes', 'expires-at']);
    if (f.user === undefined) throw new UsageError('--user is required');
    const input = parse(
      z.object({
        user: uuid('--user'),
        name: z.string().trim().min(1, '--name must not be empty').max(100, '--name must be at most 100 characters').default('cli'),
        scopes: z
          .string()
          .transform((value) => value.split(',').map((scope) => scope.trim()).filter(Boolean))
          .pipe(
            z
              .array(z.enum(scopes, { error: `--scopes takes a comma list of ${scopes.join(', ')}` }))
              .min(1, '--scopes must name at least one scope'),
          )
          .optional(),
        'expires-at': z.iso
          .datetime({ offset: true, error: '--expires-at must be an ISO 8601 timestamp with a timezone' })
          .transform((value) => new Date(value))
          .refine(isAcceptedInstant, `--expires-at must be ${acceptedInstantRange}`)
          .refine((date) => date.getTime() > Date.now(), '--expires-at must be in the future')
          .optional(),
      }),
      f,
    );
    const { handle } = await connect();
    if (!(await findUser(handle.db, input.user))) throw new CommandError(`user ${input.user} not found`);
    // Not bound by `grantRefusal` or `lifetimeRefusal` (src/auth/scopes.ts): they bound a key by the key that creates
    // it, and here no key creates it; the operator, who holds the database, grants what the command is given.
    const { row, apiKey } = await createApiKey(handle.db, {
      userId: input.user,
      name: input.name,
      scopes: input.scopes ? [...new Set(input.scopes)] : null,
      expiresAt: input['expires-at'] ?? null,
    });
    return { id: row.id, api_key: apiKey, scopes: row.scopes, expires_at: row.expires_at?.toISOString() ?? null };
  },

  'posts stuck': async (args, connect) => {
    const f = flags(args, ['older-than']);
    const graceMs = f['older-than'] === undefined ? undefined : parse(count('--older-than'), f['older-than'])! * 1000;
    const { handle } = await connect();
    const config = loadConfig();
    // An external cluster's UI is where TEMPORAL_WEB_UI_URL says (it may sit behind a login: not probed); the
    // embedded server's is linked only when it answers.
    const ui = config.temporalWebUiUrl ?? (await runningWebUiUrl(config));
    const linked = (stuck: Awaited<ReturnType<typeof findStuckPosts>>) =>
      ui ? { web_ui: ui, stuck: stuck.map((post) => ({ ...post, web_ui: webUiPostLink(ui, config.temporal.namespace, post) })) } : { stuck };
    const asking = async (address: string, unreachable: string) =>
      ({ temporal: address, ...linked(await withTemporal(address, config.temporal.namespace, unreachable, (client) => findStuckPosts(handle.db, client))) });
    if (config.temporal.address === null) {
      // The embedded Temporal lives inside the Herald that runs on this database, which names its address on the
      // one-Herald lock; none runs (or it runs on another host), or the operator asked for the database's own
      // judgement (`--older-than`): the database alone.
      const embedded = graceMs === undefined ? await runningEmbeddedTemporal(handle.db) : null;
      if (embedded === null) return { temporal: 'not_configured', ...linked(await findStuckPosts(handle.db, null, new Date(), graceMs)) };
      return asking(embedded, `could not reach the embedded Temporal of the Herald running on this database at ${embedded} (\`--older-than SECONDS\` judges from the database alone)`);
    }
    if (graceMs !== undefined) throw new UsageError('--older-than applies only without TEMPORAL_ADDRESS; with Temporal, a post is stuck when its workflow is not running');
    return asking(config.temporal.address, `could not reach Temporal at TEMPORAL_ADDRESS=${config.temporal.address}`);
  },

  'keys revoke': async (args, connect) => {
    const f = flags(args, ['key-id']);
    if (f['key-id'] === undefined) throw new UsageError('--key-id is required');
    const keyId = parse(uuid('--key-id'), f['key-id']);
    const { handle } = await connect();
    const row = await revokeApiKey(handle.db, keyId, null);
    if (!row) throw new CommandError(`key ${keyId} not found`);
    return { id: row.id, revoked_at: row.revoked_at!.toISOString() };
  },
};

/** `fn` with a client of the Temporal at `address`; one it cannot reach is `unreachable` and the reason (exit 1). */
async function withTemporal<T>(address: string, namespace: string, unreachable: string, fn: (client: Client) => Promise<T>): Promise<T> {
  // Loaded only for the commands that ask Temporal: the client's modules are heavy.
  const { Client, Connection } = require('@temporalio/client') as typeof import('@temporalio/client');
  const connection = await Connection.connect({ address }).catch((err: unknown) => {
    throw new CommandError(`${unreachable}: ${err instanceof Error ? err.message : String(err)}`);
  });
  try {
    return await fn(new Client({ connection, namespace }));
  } finally {
    await connection.close();
  }
}

/**
 * Only `herald migrate` and `npm start` change a schema in use: a command run after a `git pull`, beside a Herald
 * still running the previous code, must not apply the new migrations under it. A database with none applied yet (a
 * first install, before the first start) has nothing running on it, and gets them all.
 */
async function migrateOnlyIfNew(db: Connected['handle']['db']): Promise<void> {
  const { applied, pending } = await migrationState(db);
  if (pending.length === 0) return;
  if (applied === 0) return void (await migrateToLatest(db));
  throw new CommandError(
    `the database has ${pending.length} pending migration${pending.length === 1 ? '' : 's'} (${pending.join(', ')}): ` +
      'apply them with `herald migrate` (or `npm start`), once no Herald of the previous version runs on it',
  );
}

export async function runHerald(argv: string[]): Promise<number> {
  const [group, action, ...rest] = argv;
  if (group === 'temporal-dev') {
    // Runs in the foreground until SIGINT/SIGTERM (the dev server handles those itself).
    // Loaded only for this command: the dev server's modules are heavy and the other commands do not need them.
    const { runCli } = require('../../temporal-dev') as typeof import('../../temporal-dev');
    await runCli(argv.slice(1));
    return -1;
  }
  if (group === '--help' || group === '-h' || group === 'help') {
    process.stdout.write(`${usage}\n`);
    return 0;
  }
  let connected: Connected | undefined;
  try {
    const config = loadConfig();
    const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel, pino.destination(2));
    const open = async () => {
      // Which cluster a command works on is not obvious from a directory other than the one `npm start` runs in.
      if (config.databaseUrl === null) process.stderr.write(`herald: data dir ${config.dataDir} (embedded PostgreSQL)\n`);
      return (connected = await connectDatabase(config, { logger, poolSize: 2, migrate: false, applicationName: 'herald-cli' }));
    };
    const connect = async () => {
      if (connected) return connected;
      const opened = await open();
      await migrateOnlyIfNew(opened.handle.db);
      return opened;
    };
    let output: unknown;
    if (group === 'migrate' && action === undefined) {
      const { handle } = await open();
      output = { applied: await migrateToLatest(handle.db) };
    } else {
      const command = commands[`${group} ${action}`];
      if (!command || group === undefined || action === undefined) {
        throw new UsageError(group === undefined ? 'a command is required' : `unknown command: ${argv.join(' ')}`);
      }
      output = await command(rest, connect);
    }
    process.stdout.write(JSON.stringify(output) + '\n');
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`herald: ${err.message}\n${usage}\n`);
      return 2;
    }
    if (err instanceof CommandError || err instanceof ConfigError || err instanceof MigrationError) {
      process.stderr.write(`herald: ${err.message}\n`);
      return 1;
    }
    process.stderr.write(`herald: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    return 1;
  } finally {
    await connected?.close().catch(() => undefined);
  }
}

if (require.main === module) {
  void runHerald(process.argv.slice(2)).then((code) => {
    if (code >= 0) process.exit(code);
  });
}
