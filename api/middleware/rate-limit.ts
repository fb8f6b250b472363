import type { RequestHandler, Response } from 'express';
import type pg from 'pg';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import { ApiError } from '../../src/errors';
import { type PlanName, plans } from '../../src/plans';
import { requestAuth } from '../request-auth';

/**
 * The burst limit of publishing-api.md ("Limits"): requests per minute per API key, by the user's plan
 * (`src/plans.ts`). Counters live in Postgres (table `rate_limits`, migration 0004) through rate-limiter-flexible,
 * so every API process sharing the database enforces one limit. Every authenticated `/api/v1` response carries
 * X-RateLimit-Limit/Remaining/Reset; a refused request is 429 `rate_limited` with Retry-After.
 */
export function burstRateLimit(pool: pg.Pool): RequestHandler {
  const limiters = new Map<PlanName, RateLimiterPostgres>();
  const limiterFor = (plan: PlanName) => {
    let limiter = limiters.get(plan);
    if (!limiter) {
      limiter = new RateLimiterPostgres({
        storeClient: pool,
        storeType: 'pool',
        tableName: 'rate_limits',
        tableCreated: true,
        keyPrefix: 'burst',
        points: plans[plan].burstPerMinute,
        duration: 60,
      });
      limiters.set(plan, limiter);
    }
    return limiter;
  };

  return async (req, res, next) => {
    const auth = requestAuth(req);
    const limit = plans[auth.plan].burstPerMinute;
    try {
      const state = await limiterFor(auth.plan).consume(auth.keyId, 1);
      setHeaders(res, limit, state);
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
      setHeaders(res, limit, err);
      const retryAfter = Math.max(1, Math.ceil(err.msBeforeNext / 1000));
      throw new ApiError(
        'rate_limited',
        `Rate limit of ${limit} requests per minute exceeded for this API key; retry in ${retryAfter} second${retryAfter === 1 ? '' : 's'}`,
        {},
        { 'Retry-After': String(retryAfter) },
      );
    }
    next();
  };
}

function setHeaders(res: Response, limit: number, state: RateLimiterRes): void {
  const resetMs = Date.now() + Math.max(0, state.msBeforeNext);
  res.setHeader('X-RateLimit-Limit', String(limit));
  res.setHeader('X-RateLimit-Remaining', String(Math.max(0, state.remainingPoints)));
  res.setHeader('X-RateLimit-Reset', String(Math.ceil(resetMs / 1000)));
}
