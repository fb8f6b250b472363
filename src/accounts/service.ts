import type { Transaction } from 'kysely';
import type { Config } from '../config';
import type { SealedBox } from '../crypto/sealed-box';
import type { Database, Db } from '../db';
import type { AccountRow, AccountUpdate } from '../db/tables/accounts';
import type { User } from '../db/tables/users';
import { ApiError } from '../errors';
import { recordMadeIn } from '../idempotency/key-claim';
import type { Logger } from '../logger';
import { effectiveLimits } from '../plans';
import { platformName, requireAvailablePlatform } from '../platforms/availability';
import type { PlatformAdapters } from '../platforms/registry';
import { type AccountCredentials, type AccountIdentity, PlatformFailure, type PlatformSlug } from '../platforms/types';
import type { ConnectAccountRequest, UpdateAccountRequest } from './connect-request';
import { credentialAtConnect, credentialEndedForGood, type CredentialAtConnect } from './credential-at-connect';
import type { CredentialKeeper } from './credential-workflow-client';
import { assertTimezone, openCredentials, prepareConnection, sealCredentials } from './credentials';
import { type AccountInactiveReason, type AccountLifecycle, cancellationReasonOf, markDeactivated } from './lifecycle';
import { clearRefusal } from './mass-refusal';
import {
  countSlotHolders,
  findByPlatformAccount,
  findOwnAccount,
  holdsSlot,
  insertAccount,
  listVisibleAccounts,
  lockUserForAccounts,
  updateAccountRow,
} from './repository';

/**
 * Connecting, listing, switching off and disconnecting accounts (decisions.md "Accounts").
 *
 * Plan slots: an account holds one of the plan's slots unless the user deactivated or disconnected it. Every
 * decision that may take a slot (a new connection, reconnecting a deactivated or disconnected account, PATCH
 * `active: true`) runs in one transaction holding the user row's lock, so concurrent requests never exceed the limit.
 */

export interface AccountsDeps {
  db: Db;
  adapters: PlatformAdapters;
  sealedBox: SealedBox;
  /** HERALD_COMING_SOON entries. */
  comingSoon: ReadonlySet<string>;
  allowInsecureUrls: boolean;
  /** Cancels the account's scheduled posts; see `AccountLifecycle`. */
  lifecycle?: AccountLifecycle;
  logger: Logger;
  /** App credentials that renew expiring tokens (decisions.md "Keeping credentials alive"). */
  credentialApps: Config['credentialApps'];
  /** Starts (or wakes) the account's credential workflow once a credential that ends is stored. */
  credentialKeeper?: CredentialKeeper;
  now?: () => Date;
}

type Trx = Transaction<Database>;

export async function connectAccount(
  deps: AccountsDeps,
  userId: string,
  request: ConnectAccountRequest,
): Promise<{ account: AccountRow; created: boolean; warnings: Array<NonNullable<CredentialAtConnect['warning']>> }> {
  const platform = requireAvailablePlatform(request.platform, deps.comingSoon);
  const prepared = prepareConnection(request, { allowInsecureUrls: deps.allowInsecureUrls });
  // The platform is asked before anything is written: a refusal leaves no row behind.
  const identity = await verifyCredentials(deps, platform, prepared.credentials);
  const values = {
    username: identity.username,
    display_name: identity.displayName,
    profile_url: identity.profileUrl,
    via: prepared.via,
    kind: identity.kind ?? null,
    own_credentials: prepared.ownCredentials,
    premium: identity.premium ?? false,
    settings: JSON.stringify(identity.settings ?? {}),
  };
  // The sealed credentials and their end, once the stored row (a reconnect may keep its refresh token) is known.
  const credentialValues = (credentials: AccountCredentials) => {
    const account = { via: prepared.via, own_credentials: prepared.ownCredentials };
    const credential = credentialAtConnect(deps.credentialApps, platform, account, credentials, (deps.now ?? (() => new Date()))());
    const row = { credentials_sealed: sealCredentials(deps.sealedBox, userId, credentials), credential_expires_at: credential.expiresAt, credential_issued_at: null };
    return { credential, row };
  };

  const connected = await deps.db.transaction().execute(async (trx) => {
    const user = await lockUserForAccounts(trx, userId);
    const existing = await findByPlatformAccount(trx, userId, platform, identity.platformAccountId);
    if (!existing || !holdsSlot(existing)) await assertFreeSlot(trx, user);
    if (existing) {
      const { credential, row } = credentialValues(keepingStoredRefreshToken(deps, existing, prepared.credentials));
      const account = await updateAccountRow(trx, existing.id, {
        ...values,
        ...row,
        active: true,
        inactive_reason: null,
        // The platform has just taken the credential (`verify`): a refusal recorded before is over, and one after the
        // reconnect starts a new run (held first) rather than confirming the old one (`mass-refusal.ts`).
        credential_refused_at: null,
        ...(prepared.timezone !== undefined ? { timezone: prepared.timezone } : {}),
      });
      await clearRefusal(trx, existing.id);
      return recorded(trx, { account, created: false, credential });
    }
    const { credential, row } = credentialValues(prepared.credentials);
    const account = await insertAccount(trx, {
      ...values,
      ...row,
      user_id: userId,
      platform,
      platform_account_id: identity.platformAccountId,
      timezone: prepared.timezone ?? null,
    });
    return recorded(trx, { account, created: true, credential });
  });
  const { account, created, credential } = connected;
  // Renewable or not: one nothing can renew is lost by its workflow when it ends.
  if (credential.expiresAt !== null) await keepCredentialAlive(deps, account.id);
  return { account, created, warnings: warningsOf(credential) };
}

const warningsOf = (credential: CredentialAtConnect) => (credential.warning ? [credential.warning] : []);

/** What a connect made, as recorded under its Idempotency-Key claim (`recordMadeIn`): what its answer is made from. */
export interface MadeConnection {
  account_id: string;
  created: boolean;
  warnings: Array<NonNullable<CredentialAtConnect['warning']>>;
}

/** The connection, recorded in its transaction under the request's Idempotency-Key claim, if it has one. */
async function recorded<T extends { account: AccountRow; created: boolean; credential: CredentialAtConnect }>(trx: Trx, connection: T): Promise<T> {
  await recordMadeIn(trx, { account_id: connection.account.id, created: connection.created, warnings: warningsOf(connection.credential) } satisfies MadeConnection);
  return connection;
}

/**
 * The answer of a connect whose process died after its transaction committed, before its answer was stored: the
 * account as it is now, `created` as the connect found it (the retry would otherwise find the account and say 200).
 */
export async function answerMadeConnection(deps: Pick<AccountsDeps, 'db'>, userId: string, made: MadeConnection) {
  const account = await findOwnAccount(deps.db, userId, made.account_id);
  if (!account) throw new ApiError('not_found', `Account ${made.account_id} not found`);
  return { account, created: made.created, warnings: made.warnings };
}

/** The account is stored whatever happens here: a workflow that cannot be started now is given by the next start's reconciler. */
async function keepCredentialAlive(deps: AccountsDeps, accountId: string): Promise<void> {
  await deps.credentialKeeper?.credentialStored(accountId).catch((err) => {
    deps.logger.error({ err, accountId }, 'could not start the credential workflow');
  });
}

/**
 * A reconnect that brings no refresh token keeps the stored one (decisions.md "Keeping credentials alive"): an empty
 * value never overwrites a refresh token Herald may still renew with. One the platform refused is no longer stored
 * (`credential-renewal.ts`), so such a reconnect is treated as one without a refresh token. OAuth 1.0a credentials carry none.
 */
function keepingStoredRefreshToken(deps: AccountsDeps, existing: AccountRow, credentials: AccountCredentials): AccountCredentials {
  if (credentials.refresh_token || credentials.api_key || existing.credentials_sealed === null) return credentials;
  const stored = openCredentials(deps.sealedBox, existing.user_id, existing.credentials_sealed).refresh_token;
  return stored ? { ...credentials, refresh_token: stored } : credentials;
}

async function verifyCredentials(deps: AccountsDeps, platform: PlatformSlug, credentials: AccountCredentials): Promise<AccountIdentity> {
  try {
    return await deps.adapters[platform].verify({ credentials, settings: {} });
  } catch (err) {
    if (err instanceof ApiError) throw err;
    if (!(err instanceof PlatformFailure)) {
      // An answer the adapter did not foresee: still the platform's doing at connect, and nothing was written.
      deps.logger.error({ err, platform }, 'verifying account credentials failed unexpectedly');
      throw new ApiError('upstream_error', `${platformName(platform)} answered in a way Herald could not read; nothing was connected.`);
    }
    deps.logger.info({ platform, kind: err.kind, detail: err.detail }, 'platform refused account credentials');
    throw upstreamRefusal(platform, err);
  }
}

/**
 * A refusal at connect time is 502 `upstream_error` with the adapter's short message, whatever its kind, a platform
 * rate limit included (the catalogue's 429 codes are Herald's own limits); a known wait is passed on in Retry-After.
 */
function upstreamRefusal(platform: PlatformSlug, failure: PlatformFailure): ApiError {
  const name = platformName(platform);
  const message = failure.clientMessage.toLowerCase().includes(name.toLowerCase()) ? failure.clientMessage : `${name}: ${failure.clientMessage}`;
  const headers: Record<string, string> =
    failure.kind === 'rate_limited' && failure.retryAfterSeconds !== undefined ? { 'Retry-After': String(Math.ceil(failure.retryAfterSeconds)) } : {};
  return new ApiError('upstream_error', message, {}, headers);
}

async function assertFreeSlot(trx: Trx, user: User): Promise<void> {
  const limit = effectiveLimits(user.plan, user).accounts;
  if (limit === Infinity) return;
  const inUse = await countSlotHolders(trx, user.id);
  if (inUse >= limit) {
    throw new ApiError(
      'account_limit_reached',
      `The ${user.plan} plan allows ${limit} connected account${limit === 1 ? '' : 's'} and ${inUse} ${inUse === 1 ? 'is' : 'are'} in use; deactivate or disconnect one, or change plans.`,
    );
  }
}

function notFound(accountId: string): ApiError {
  return new ApiError('not_found', `Account ${accountId} not found`);
}

/** A disconnected account answers 404 like an absent one. */
export async function getAccount(db: Db, userId: string, accountId: string): Promise<AccountRow> {
  const account = await findOwnAccount(db, userId, accountId);
  if (!account || account.inactive_reason === 'disconnected') throw notFound(accountId);
  return account;
}

export function listAccounts(db: Db, userId: string): Promise<AccountRow[]> {
  return listVisibleAccounts(db, userId);
}

export async function updateAccount(deps: AccountsDeps, userId: string, accountId: string, request: UpdateAccountRequest): Promise<AccountRow> {
  if (request.active === undefined && request.timezone === undefined) {
    throw new ApiError('bad_request', 'Nothing to change: send active and/or timezone');
  }
  if (typeof request.timezone === 'string') assertTimezone(request.timezone);

  const account = await deps.db.transaction().execute(async (trx) => {
    const user = await lockUserForAccounts(trx, userId);
    const current = await findOwnAccount(trx, userId, accountId, { lock: true });
    if (!current || current.inactive_reason === 'disconnected') throw notFound(accountId);
    const changes: AccountUpdate = {};
    if (request.timezone !== undefined) changes.timezone = request.timezone;
    if (request.active === true && !current.active) {
      if (current.inactive_reason === 'connection_lost' || credentialEnded(deps, current)) throw reconnectFirst(current);
      // Switched off before 2026-11-28, an account that needed re-authorizing kept that reason (and its slot).
      if (current.inactive_reason === 'reauthorization_required') Object.assign(changes, { active: true });
      else {
        await assertFreeSlot(trx, user);
        Object.assign(changes, { active: true, inactive_reason: null });
      }
    }
    const updated = Object.keys(changes).length > 0 ? await updateAccountRow(trx, current.id, changes) : current;
    return request.active === false ? ((await markDeactivated(trx, current.id)) ?? updated) : updated;
  });

  // A lost connection stays the reason of an account the user also switched off: a repeated request finishes its
  // cancellation with it.
  if (request.active === false) await accountWentInactive(deps, account.id, cancellationReasonOf(account));
  // Switched back on: its credential workflow (which ended when the account was switched off) runs again.
  if (request.active === true && account.active && account.credential_expires_at !== null) await keepCredentialAlive(deps, account.id);
  return account;
}

/** The switched-off account's stored credential ended while off, and nothing can renew it (`credentialEndedForGood`). */
function credentialEnded(deps: AccountsDeps, account: AccountRow): boolean {
  if (account.credentials_sealed === null || account.credential_expires_at === null) return false;
  const credentials = openCredentials(deps.sealedBox, account.user_id, account.credentials_sealed);
  return credentialEndedForGood(deps.credentialApps, account, credentials, (deps.now ?? (() => new Date()))());
}

/** PATCH `active: true` on an account whose credential the platform refuses (`connection_lost`) or that ended for good. */
function reconnectFirst(account: AccountRow): ApiError {
  return new ApiError('bad_request', `${platformName(account.platform)} no longer accepts this account's credentials; reconnect it with POST /api/v1/accounts`);
}

/**
 * Disconnect: the account is switched off with `disconnected` and its credentials wiped; the row stays (posts keep
 * their history, and reconnecting the same platform account restores it). Repeating it answers the same.
 */
export async function disconnectAccount(deps: AccountsDeps, userId: string, accountId: string): Promise<AccountRow> {
  const account = await deps.db.transaction().execute(async (trx) => {
    const current = await findOwnAccount(trx, userId, accountId, { lock: true });
    if (!current) throw notFound(accountId);
    if (current.inactive_reason === 'disconnected') return current;
    return updateAccountRow(trx, current.id, { active: false, inactive_reason: 'disconnected', credentials_sealed: null });
  });
  await accountWentInactive(deps, account.id, 'account_disconnected');
  return account;
}

async function accountWentInactive(deps: AccountsDeps, accountId: string, reason: AccountInactiveReason): Promise<void> {
  if (!deps.lifecycle) {
    deps.logger.warn({ accountId, reason }, 'no account lifecycle configured: scheduled posts of the account were not cancelled');
    return;
  }
  await deps.lifecycle.accountDeactivated(accountId, reason);
}
