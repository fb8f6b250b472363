import type { Transaction } from 'kysely';
import type { SealedBox } from '../crypto/sealed-box';
import type { Database, Db } from '../db';
import type { AccountRow } from '../db/tables/accounts';
import type { Logger } from '../logger';
import type { CredentialLifetime } from '../platforms/renewal/types';
import type { CredentialRenewer, CredentialRenewers } from '../platforms/renewal/types';
import { RenewalSetupFailure } from '../platforms/renewal/token-endpoint';
import { PlatformFailure, type AccountCredentials } from '../platforms/types';
import { openCredentials, sealCredentials } from './credentials';
import { markConnectionLost, type AccountLifecycle } from './lifecycle';
import { clearRefusal, recordRefusal, type MassRefusal } from './mass-refusal';

/**
 * Renewing an account's expiring credential (decisions.md "Keeping credentials alive"): the one place that calls a
 * platform's token endpoint and stores the answer. Every renewal runs under the account row's lock (SELECT ... FOR
 * NO KEY UPDATE) from reading the stored tokens to storing the new ones, so two renewals of one account never race: X
 * refresh tokens are single-use, and the second caller finds the token it saw fail already replaced and sends nothing.
 * The new pair is sealed and written in the same transaction that read the old one, so the old one is never dropped
 * first. Not FOR UPDATE: that lock also holds back every insert referencing the account (a post's FK check takes FOR
 * KEY SHARE) for the whole token-endpoint call; the call is bounded by the token endpoint's own timeout (10 s,
 * `token-endpoint.ts`).
 */

export interface CredentialRenewalDeps {
  db: Db;
  sealedBox: SealedBox;
  renewers: CredentialRenewers;
  logger: Logger;
  /** Cancels the scheduled posts of an account whose renewal the platform refused (`connection_lost`). */
  lifecycle?: AccountLifecycle;
}

export type RenewalOutcome =
  | { kind: 'renewed'; expiresAt: number }
  /** Nothing to do now: another caller renewed it already, or (`onlyIfDue`) its time has not come. */
  | { kind: 'current'; expiresAt: number | null }
  /** The platform refused the renewal: the account is `connection_lost` and its scheduled posts are cancelled. */
  | { kind: 'lost' }
  /** Nothing can renew it (no refresh token, no app credentials, a credential that does not expire). */
  | { kind: 'not_renewable' }
  /** Deleted, disconnected, or its connection lost: nothing to keep alive. */
  | { kind: 'gone'; connectionLost?: true };

/** Renew at 80% of the credential's lifetime, and at least 10 minutes before it ends. */
const RENEW_AT_FRACTION = 0.8;
const RENEW_AT_LEAST_BEFORE_MS = 10 * 60_000;

/**
 * When the stored credential is due for renewal (ms). A token of unknown age (`credential_issued_at` null: handed over
 * at connect time, `credential_expires_at` its latest end) is first renewed `firstRenewalAfterS` after the connect.
 */
export function renewalDueAt(account: Pick<AccountRow, 'credential_issued_at' | 'credential_expires_at'>, lifetime: CredentialLifetime): number {
  const expires = account.credential_expires_at?.getTime();
  if (expires === undefined) return 0;
  const issued = account.credential_issued_at?.getTime();
  if (issued === undefined) return expires - (lifetime.tokenLifetimeSeconds - lifetime.firstRenewalAfterS) * 1000;
  return Math.min(issued + RENEW_AT_FRACTION * (expires - issued), expires - RENEW_AT_LEAST_BEFORE_MS);
}

/** The renewer that can keep this account's credential alive, or null when none can. */
export function renewerOf(renewers: CredentialRenewers, account: AccountRow, credentials: AccountCredentials): CredentialRenewer | null {
  const renewer = renewers[account.platform];
  if (!renewer || !renewer.configured || !renewer.applies(account)) return null;
  return credentials[renewer.renewsWith] ? renewer : null;
}

interface RenewalRequest {
  /** Now, in the caller's clock (the workflow's under time skipping); the new token's lifetime counts from it. */
  now: number;
  /** The access token a platform just refused: renew only if it is still the stored one. */
  staleAccessToken?: string;
  /** Renew only if the stored credential is due (a scheduled renewal that finds it renewed meanwhile does nothing). */
  onlyIfDue?: boolean;
}

/** A refusal the mass-loss guard held back: committed (its record counts), then thrown as a `RenewalSetupFailure`. */
type HeldRefusal = { kind: 'held'; platform: AccountRow['platform']; mass: MassRefusal; detail: PlatformFailure['detail'] };

/**
 * Only a dead credential (`reauthorize`) loses the connection. Throws the renewer's transient `PlatformFailure`
 * (`retryable`, `rate_limited`, and `RenewalSetupFailure`, a refusal of Herald's own app credentials or request):
 * nothing was stored, the old pair stays, and the caller tries again later. Also throws a `RenewalSetupFailure` for a
 * refusal held back by the mass-loss guard (`mass-refusal.ts`): the account keeps its credential, tried again later.
 */
export async function renewAccountCredential(deps: CredentialRenewalDeps, accountId: string, request: RenewalRequest): Promise<RenewalOutcome> {
  const outcome = await deps.db.transaction().execute(async (trx): Promise<RenewalOutcome | HeldRefusal> => {
    const account = await trx.selectFrom('accounts').selectAll().where('id', '=', accountId).forNoKeyUpdate().executeTakeFirst();
    // A switched-off account is still renewed when asked: deleting its published posts uses its credential. One whose
    // connection was lost waits for a reconnect.
    if (!account || account.credentials_sealed === null) return { kind: 'gone' };
    if (account.inactive_reason === 'connection_lost') return { kind: 'gone', connectionLost: true };
    const credentials = openCredentials(deps.sealedBox, account.user_id, account.credentials_sealed);
    const renewer = renewerOf(deps.renewers, account, credentials);
    if (!renewer) return { kind: 'not_renewable' };
    const expiresAt = account.credential_expires_at?.getTime() ?? null;
    if (request.staleAccessToken !== undefined && credentials.access_token !== request.staleAccessToken) return { kind: 'current', expiresAt };
    if (request.onlyIfDue && renewalDueAt(account, renewer) > request.now) return { kind: 'current', expiresAt };

    let renewed;
    try {
      renewed = await renewer.renew(credentials);
    } catch (err) {
      if (!(err instanceof PlatformFailure)) throw err;
      if (err instanceof RenewalSetupFailure) {
        // Every account of the platform meets it until an operator acts: the user's credential is not to blame.
        deps.logger.error({ accountId, platform: account.platform, fix: err.fix, detail: err.detail }, `credential renewal refused Herald itself: ${err.fix}`);
      } else if (err.kind !== 'reauthorize') {
        deps.logger.warn({ accountId, platform: account.platform, kind: err.kind, detail: err.detail }, 'credential renewal refused');
      }
      if (err.kind !== 'reauthorize') throw err;
      // Recorded in this transaction, which commits: the held refusal still counts when the account is tried again.
      // A refusal naming the account's own end (Graph's subcodes) is never held; nor recorded, so it cannot hold others.
      const mass = renewer.guardsMassRefusal && !renewer.isAccountsOwnRefusal(err) ? await recordRefusal(trx, accountId, account.platform) : null;
      if (mass) return { kind: 'held', platform: account.platform, mass, detail: err.detail };
      deps.logger.warn({ accountId, platform: account.platform, kind: err.kind, detail: err.detail }, 'credential renewal refused');
      await dropRefusedRefreshToken(trx, deps.sealedBox, account, credentials);
      // A switched-off account keeps the user's reason (`markConnectionLost`); with its refresh token dropped, nothing renews it.
      return (await markConnectionLost(trx, accountId)) ? { kind: 'lost' } : { kind: 'not_renewable' };
    }
    const next: AccountCredentials = { ...credentials, access_token: renewed.accessToken };
    if (renewed.refreshToken) next.refresh_token = renewed.refreshToken;
    const lifetimeMs = (renewed.expiresInSeconds || renewer.tokenLifetimeSeconds) * 1000;
    await trx
      .updateTable('accounts')
      .set({
        credentials_sealed: sealCredentials(deps.sealedBox, account.user_id, next),
        credential_issued_at: new Date(request.now),
        credential_expires_at: new Date(request.now + lifetimeMs),
        // A call refusal recorded for it is over too (`endCallRefusal`): the platform took the grant.
        credential_refused_at: null,
      })
      .where('id', '=', accountId)
      .execute();
    // Logged once, as its hold began (below): the account renews again.
    if ((renewer.guardsMassRefusal || account.credential_refused_at !== null) && (await clearRefusal(trx, accountId))) {
      deps.logger.info({ accountId, platform: account.platform }, 'credential renewed again: its held refusal is over');
    }
    deps.logger.info({ accountId, platform: account.platform, expiresInSeconds: renewed.expiresInSeconds }, 'credential renewed');
    return { kind: 'renewed', expiresAt: request.now + lifetimeMs };
  });
  if (outcome.kind === 'held') {
    const held = new RenewalSetupFailure(
      outcome.platform,
      `${outcome.mass.refused} ${outcome.platform} accounts' renewals were refused in the last hour against ${outcome.mass.renewed} renewed: held back as a possible outage or a refusal of Herald's app, not marked lost; check the platform's status and its app credentials`,
      outcome.detail ?? {},
    );
    // Once, as the account's hold begins; its retries (up to every 10 minutes, for as long as the platform refuses)
    // at debug level, or an outage would log an error per account every few minutes.
    const { first, ...counts } = outcome.mass;
    deps.logger[first ? 'error' : 'debug']({ accountId, platform: outcome.platform, ...counts, fix: held.fix, detail: held.detail }, `credential renewal refusals held back: ${held.fix}`);
    throw held;
  }
  // Also when the connection was lost already: the cancellation runs after the commit, and one that failed (a retried
  // renewal then finds the account lost) is finished here. It is idempotent: nothing is left to cancel otherwise.
  const lost = outcome.kind === 'lost' || (outcome.kind === 'gone' && outcome.connectionLost === true);
  if (lost && deps.lifecycle) await deps.lifecycle.accountDeactivated(accountId, 'connection_lost');
  return outcome;
}

/**
 * The platform refused the stored refresh token for good: it is not kept. A reconnect that brings none then has
 * nothing to carry over (`connectAccount` keeps only a stored one), so it is told its token will not be renewed and
 * works until that token ends, instead of a renewal at once with the dead one losing the connection again.
 */
async function dropRefusedRefreshToken(trx: Transaction<Database>, box: SealedBox, account: AccountRow, credentials: AccountCredentials): Promise<void> {
  if (!credentials.refresh_token) return;
  const kept: AccountCredentials = { ...credentials };
  delete kept.refresh_token;
  // Under the row lock taken by the renewal that was refused: the stored credentials are still the ones it sent.
  await trx.updateTable('accounts').set({ credentials_sealed: sealCredentials(box, account.user_id, kept) }).where('id', '=', account.id).execute();
}

/**
 * A credential nothing can renew (x or linkedin without a refresh token, or without the app credentials) has reached
 * its end: the account becomes `connection_lost` and its scheduled posts are cancelled with that reason, as when a
 * renewal is refused (decisions.md "Keeping credentials alive"). Only if the stored credential has still ended by
 * `now`: a reconnect since stored a new one, which is kept (`current`).
 */
export async function loseEndedCredential(deps: CredentialRenewalDeps, accountId: string, now: number): Promise<RenewalOutcome> {
  const lost = await markConnectionLost(deps.db, accountId, deps.lifecycle, { credentialEndedBy: new Date(now) });
  if (!lost) return { kind: 'current', expiresAt: null };
  deps.logger.info({ accountId }, 'credential ended and nothing can renew it: connection lost');
  return { kind: 'lost' };
}
