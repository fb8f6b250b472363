import { markConnectionLost, markReauthorizationRequired, type AccountLifecycle } from '../accounts/lifecycle';
import type { Db } from '../db';
import type { AccountRow } from '../db/tables/accounts';
import { ApiError } from '../errors';
import { platformName } from '../platforms/availability';
import { GraphFailure } from '../platforms/graph/errors';
import type { PlatformFailure } from '../platforms/types';
import { reauthorizeSentence } from './actions-target';

/**
 * What a platform's refusal of a comment action (reply, hide, delete) becomes for the client and the account:
 * - a missing permission (Graph's permission family, or an HTTP 403 classified `reauthorize`): the account keeps
 *   posting but is marked `reauthorization_required`; 409 `comment_permission_required`.
 * - a credential the platform no longer accepts at all (`reauthorize` otherwise): the account is `connection_lost`,
 *   as a refused publish makes it, and its scheduled posts are cancelled; 409 `comment_permission_required`.
 * - anything else: 502 `upstream_error` with the adapter's sentence (never the platform's body), `Retry-After` when
 *   the platform named a wait.
 */
export async function commentActionRefusal(
  deps: { db: Db; lifecycle?: AccountLifecycle },
  account: Pick<AccountRow, 'id' | 'platform'>,
  failure: PlatformFailure,
): Promise<ApiError> {
  if (failure.kind === 'reauthorize') {
    await markAccountRefused(deps, account.id, failure);
    // Only a withheld permission leaves posting working; a refused credential's own sentence already says to reconnect.
    const message = isMissingPermission(failure) ? `${failure.clientMessage} ${reauthorizeSentence(platformName(account.platform))}` : failure.clientMessage;
    return new ApiError('comment_permission_required', message);
  }
  const headers: Record<string, string> = failure.retryAfterSeconds ? { 'Retry-After': String(Math.ceil(failure.retryAfterSeconds)) } : {};
  return new ApiError('upstream_error', failure.clientMessage, {}, headers);
}

/**
 * What a `reauthorize` refusal of a comment operation (an action, or a refresh) says about the account: a missing
 * permission marks it `reauthorization_required` (it keeps posting); a refused credential marks it `connection_lost`
 * and cancels its scheduled posts, so only a caller holding the `lifecycle` that cancels them marks that (otherwise the
 * next publish finds the refused credential and does both). Other refusals change nothing.
 */
export async function markAccountRefused(deps: { db: Db; lifecycle?: AccountLifecycle }, accountId: string, failure: PlatformFailure): Promise<void> {
  if (failure.kind !== 'reauthorize') return;
  if (isMissingPermission(failure)) await markReauthorizationRequired(deps.db, accountId);
  else if (deps.lifecycle) await markConnectionLost(deps.db, accountId, deps.lifecycle);
}

function isMissingPermission(failure: PlatformFailure): boolean {
  return (failure instanceof GraphFailure && failure.isPermissionError) || failure.detail?.status === 403;
}
