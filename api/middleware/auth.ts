import type { RequestHandler } from 'express';
import { createKeyAuthenticator, type KeyAuthenticator } from '../../src/auth/key-cache';
import { holdsScope, type Scope } from '../../src/auth/scopes';
import type { AppDeps } from '../deps';
import { ApiError } from '../../src/errors';
import { maybeRequestAuth, setRequestAuth } from '../request-auth';

const authenticators = new WeakMap<AppDeps, KeyAuthenticator>();

/** This app's key authenticator and its cache (src/auth/key-cache.ts), built once per `AppDeps`. */
export function keyAuthenticatorOf(deps: AppDeps): KeyAuthenticator {
  let authenticator = authenticators.get(deps);
  if (!authenticator) {
    authenticator = createKeyAuthenticator(deps.db, deps.keyCache);
    authenticators.set(deps, authenticator);
  }
  return authenticator;
}

/** `Authorization: Bearer <API_KEY>` on every `/api/v1` route; sets `requestAuth(req)`. */
export function authenticateRequests(deps: AppDeps): RequestHandler {
  const authenticator = keyAuthenticatorOf(deps);
  return async (req, _res, next) => {
    setRequestAuth(req, await authenticator.authenticate(req.headers.authorization));
    next();
  };
}

/** The key must hold `scope` (keys with null scopes hold all); otherwise 403 `insufficient_scope` naming it. */
export function requireScope(scope: Scope): RequestHandler {
  return (req, _res, next) => {
    assertScope(req, scope);
    next();
  };
}

function assertScope(req: Parameters<RequestHandler>[0], scope: Scope): void {
  const auth = maybeRequestAuth(req);
  if (!auth) throw new ApiError('unauthorized', 'Missing API key: send the header Authorization: Bearer <API_KEY>');
  if (!holdsScope(auth.scopes, scope)) {
    throw new ApiError('insufficient_scope', `This API key lacks the scope ${scope}, which this request needs`);
  }
}
