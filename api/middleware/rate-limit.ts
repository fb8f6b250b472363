import type { RequestHandler, Response } from 'express';
import type pg from 'pg';
import { type BurstDecision, createBurstLimiter } from '../../src/auth/burst-leases';
import { ApiError } from '../../src/errors';
import { plans } from '../../src/plans';
import { requestAuth } from '../request-auth';

/**
 * The burst limit of publishing-api.md ("Limits"): requests per minute per API key, by the user's plan
 * (`src/plans.ts`). Counted in Postgres (table `rate_limits`) through `src/auth/burst-leases.ts`, so every API
 * process sharing the database enforces one limit. Every authenticated `/api/v1` response carries
 * X-RateLimit-Limit/Remaining/Reset; a refused request is 429 `rate_limited` with Retry-After.
 */
export function burstRateLimit(pool: pg.Pool): RequestHandler {
  const limiter = createBurstLimiter(pool);
  return async (req, res, next) => {
    const auth = requestAuth(req);
    const decision = await limiter.consume(auth.keyId, plans[auth.plan].burstPerMinute);
    setHeaders(res, decision);
    if (!decision.allowed) {
      const retryAfter = Math.max(1, Math.ceil((decision.resetAt - Date.now()) / 1000));
      throw new ApiError(
        'rate_limited',
        `Rate limit of ${decision.limit} requests per minute exceeded for this API key; retry in ${retryAfter} second${retryAfter === 1 ? '' : 's'}`,
        {},
        { 'Retry-After': String(retryAfter) },
      );
    }
    next();
  };
}

function setHeaders(res: Response, decision: BurstDecision): void {
  res.setHeader('X-RateLimit-Limit', String(decision.limit));
  res.setHeader('X-RateLimit-Remaining', String(decision.remaining));
  res.setHeader('X-RateLimit-Reset', String(Math.ceil(decision.resetAt / 1000)));
}
