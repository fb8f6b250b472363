import type { Request } from 'express';
import type { ScopeList } from '../src/auth/scopes';
import type { PlanName } from '../src/plans';

/** Who is calling: set by the authentication middleware on every `/api/v1` request that gets past it. */
export interface RequestAuth {
  keyId: string;
  userId: string;
  scopes: ScopeList;
  plan: PlanName;
  /** When the calling key stops working (null: never): a key it creates may not outlive it. */
  expiresAt: Date | null;
}

const authKey = Symbol('herald.auth');

export function setRequestAuth(req: Request, auth: RequestAuth): void {
  (req as unknown as Record<symbol, RequestAuth>)[authKey] = auth;
}

/** The caller of an authenticated request; throws (500) when used on a route that skipped authentication. */
export function requestAuth(req: Request): RequestAuth {
  const auth = (req as unknown as Record<symbol, RequestAuth | undefined>)[authKey];
  if (!auth) throw new Error('requestAuth() called on a request that was not authenticated');
  return auth;
}

export function maybeRequestAuth(req: Request): RequestAuth | undefined {
  return (req as unknown as Record<symbol, RequestAuth | undefined>)[authKey];
}
