import { PassingRefusal } from '../errors';

/**
 * 404 `not_found` for an account of the user's that cannot post now: switched off, disconnected, or its connection
 * lost (publishing-api.md "Errors": "account not found or not active"). The contract's code, as for an absent
 * account; a class of its own because this refusal passes: switching the account on or reconnecting it (which keeps
 * its id) lets the same request through: a `PassingRefusal`, not kept for replay (`api/idempotency.ts`
 * `keptForReplay`). An account that is absent or another user's stays a plain `ApiError`.
 */
export class AccountNotActiveError extends PassingRefusal {
  constructor(message: string) {
    super('not_found', message);
  }

  override prefixed(prefix: string): AccountNotActiveError {
    return new AccountNotActiveError(`${prefix}${this.message}`);
  }
}
