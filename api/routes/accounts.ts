import { z } from 'zod';
import {
  AccountSchema,
  type AccountsDeps,
  answerMadeConnection,
  ConnectAccountBody,
  connectAccount,
  type MadeConnection,
  disconnectAccount,
  getAccount,
  listAccounts,
  toAccountView,
  UpdateAccountBody,
  updateAccount,
} from '../../src/accounts';
import { createSealedBox, type SealedBox } from '../../src/crypto/sealed-box';
import type { AppDeps } from '../deps';
import { defineRoute } from '../route';
import { idParams } from '../validation';

/** decisions.md "Accounts": `/api/v1/accounts`. Reads need `accounts:read`, changes `accounts:write`. */

const accountBody = z.object({ data: AccountSchema });
const ConnectWarning = z
  .object({ account_id: z.string(), platform: z.string(), code: z.enum(['credential_not_renewable']), message: z.string() })
  .meta({ id: 'ConnectWarning', description: 'Something the connection will need later (today: reconnecting when a token Herald cannot renew ends)' });
const connectedBody = z.object({ data: AccountSchema, meta: z.object({ warnings: z.array(ConnectWarning) }) });

const sealedBoxes = new WeakMap<AppDeps, SealedBox>();

function accountsDeps(deps: AppDeps): AccountsDeps {
  if (!deps.adapters) throw new Error('the accounts API needs platform adapters (AppDeps.adapters)');
  let sealedBox = deps.sealedBox ?? sealedBoxes.get(deps);
  if (!sealedBox) {
    if (!deps.config.encryptionKey) throw new Error('the accounts API needs an encryption key (HERALD_ENCRYPTION_KEY)');
    sealedBox = createSealedBox(deps.config.encryptionKey);
    sealedBoxes.set(deps, sealedBox);
  }
  return {
    db: deps.db,
    adapters: deps.adapters,
    sealedBox,
    comingSoon: deps.config.comingSoon,
    allowInsecureUrls: deps.config.allowInsecureUrls,
    lifecycle: deps.accountLifecycle,
    logger: deps.logger,
    credentialApps: deps.config.credentialApps,
    credentialKeeper: deps.credentialKeeper,
  };
}

/** A connect's answer: 201 for a new account, 200 for one the user had; `meta.warnings` names the account. */
function connectedAnswer({ account, created, warnings }: Awaited<ReturnType<typeof connectAccount>>) {
  const entries = warnings.map((warning) => ({ account_id: account.id, platform: account.platform, ...warning }));
  return { status: created ? 201 : 200, body: { data: toAccountView(account), meta: { warnings: entries } } };
}

export const accountsRoutes = [
  defineRoute({
    method: 'post',
    path: '/accounts',
    summary: 'Connect an account',
    description:
      'Connects an account with credentials you already hold. Herald verifies them with the platform first (a refusal is 502 upstream_error and nothing is saved), stores them encrypted and never returns them. ' +
      'Connecting a platform account you already have (same platform account) refreshes its credentials, switches it back on and answers 200; it needs no free slot unless you had deactivated or disconnected it. ' +
      'A new account beyond the plan limit is 429 account_limit_reached. Accounts you deactivated or disconnected do not count toward the limit. ' +
      'Expiring tokens (x OAuth 2.0, linkedin, threads, instagram) are renewed by Herald before they end; `meta.warnings` says when this one cannot be (no refresh_token, or no app credentials configured), so the account will need reconnecting when its token ends. A reconnect without a refresh_token keeps the stored one, unless the platform refused it (then the reconnect is warned like one without).',
    tags: ['Accounts'],
    scope: 'accounts:write',
    body: ConnectAccountBody,
    idempotent: true,
    errors: [
      'bluesky_app_password_required',
      'mastodon_instance_invalid',
      'account_limit_reached',
      'platform_coming_soon',
      'platform_unsupported',
      'upstream_error',
    ],
    responses: {
      201: { description: 'Connected a new account', schema: connectedBody },
      200: { description: 'Reconnected an account you already had (same platform account)', schema: connectedBody },
    },
    handler: async ({ body, auth, deps }) => connectedAnswer(await connectAccount(accountsDeps(deps), auth.userId, body)),
    resume: async ({ made, auth, deps }) => connectedAnswer(await answerMadeConnection(deps, auth.userId, made as MadeConnection)),
  }),
  defineRoute({
    method: 'get',
    path: '/accounts',
    summary: 'List accounts',
    description: 'Newest first. Inactive accounts are listed with their `inactive_reason`; disconnected ones are not listed.',
    tags: ['Accounts'],
    scope: 'accounts:read',
    responses: { 200: { description: 'The accounts', schema: z.object({ data: z.array(AccountSchema) }) } },
    handler: async ({ auth, deps }) => ({ status: 200, body: { data: (await listAccounts(deps.db, auth.userId)).map(toAccountView) } }),
  }),
  defineRoute({
    method: 'get',
    path: '/accounts/:id',
    summary: 'Get an account',
    description: "A disconnected account, or another user's, is 404.",
    tags: ['Accounts'],
    scope: 'accounts:read',
    params: idParams,
    errors: ['not_found'],
    responses: { 200: { description: 'The account', schema: accountBody } },
    handler: async ({ params, auth, deps }) => ({
      status: 200,
      body: { data: toAccountView(await getAccount(deps.db, auth.userId, params.id)) },
    }),
  }),
  defineRoute({
    method: 'patch',
    path: '/accounts/:id',
    summary: 'Switch an account off or on, or set its timezone',
    description:
      '`active: false` deactivates the account: its scheduled posts are cancelled with error_message account_deactivated and their quota returned. ' +
      '`active: true` switches a deactivated account back on within the plan limit (429 account_limit_reached beyond it); an account whose connection was lost must be reconnected with POST instead. ' +
      '`timezone` sets (or, with null, clears) the zone schedule_at without an offset is read in. An empty body is 400.',
    tags: ['Accounts'],
    scope: 'accounts:write',
    params: idParams,
    body: UpdateAccountBody,
    errors: ['not_found', 'account_limit_reached'],
    responses: { 200: { description: 'The account as changed', schema: accountBody } },
    handler: async ({ params, body, auth, deps }) => ({
      status: 200,
      body: { data: toAccountView(await updateAccount(accountsDeps(deps), auth.userId, params.id, body)) },
    }),
  }),
  defineRoute({
    method: 'delete',
    path: '/accounts/:id',
    summary: 'Disconnect an account',
    description:
      'The account is switched off with inactive_reason disconnected and its credentials are wiped. Its scheduled posts are cancelled with error_message account_disconnected and their quota returned; its other posts are kept and show account_id null. ' +
      'Repeating the request answers the same 200. Connecting the same platform account again restores it under the same id.',
    tags: ['Accounts'],
    scope: 'accounts:write',
    params: idParams,
    errors: ['not_found'],
    responses: { 200: { description: 'The disconnected account', schema: accountBody } },
    handler: async ({ params, auth, deps }) => ({
      status: 200,
      body: { data: toAccountView(await disconnectAccount(accountsDeps(deps), auth.userId, params.id)) },
    }),
  }),
];
