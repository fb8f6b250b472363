import type { RequestHandler } from 'express';
import { authenticate } from '../../src/auth/api-keys';
import { holdsScope, type Scope } from '../../src/auth/scopes';
import type { Db } from '../../src/db';
import { ApiError } from '../../src/errors';
import { maybeRequestAuth, setRequestAuth } from '../request-auth';

/** `Authorization: Bearer <API_KEY>` on every `/api/v1` route; sets `requestAuth(req)`. */
export function authenticateRequests(db: Db): RequestHandler {
  return async (req, _res, next) => {
    setRequestAuth(req, await authenticate(db, req.headers.authorization));
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
