import type pg from 'pg';

/**
 * The burst limit's counter (publishing-api.md "Limits": requests per minute per API key), shared by every API
 * process through one row per key in `rate_limits` (migration 0004, unlogged since 0086), without a round trip to
 * PostgreSQL on every request (issue 15).
 *
 * A process takes points from the shared row in leases: one statement adds `size` points to the key's count for the
 * current window and grants the part of them that was still under the limit; the process then spends what it was
 * granted without asking again. Points are counted in the row before they are spent, so the sum of every process's
 * grants in a window never exceeds the limit: the limit holds across processes exactly as before, never per process.
 *
 * A lease grows (1, 1, 2, 4, ... up to a twentieth of the limit, at most 100) only while the row shows no other
 * process counting the same key; as soon as one does, this process goes back to leases of one point, i.e. one
 * statement per request, so a key used from several processes at once is counted request by request. What a lease
 * gives up: points leased and not spent before the window ends are lost (fewer than one lease, so under 100 a window
 * per process and key), and another process may be refused up to that many requests early. X-RateLimit-Remaining is
 * exact for a key used through one process, and an approximation (as of this process's last lease) when several are.
 *
 * A key whose window is full is refused from memory until the window ends, so refused requests cost no statement.
 *
 * A key this process uses alone and often (its lease has grown: a second lease in the window found no one else
 * counting) has its next lease taken ahead, in the background, by the request that spends the last point of the
 * current one: the next request finds its point leased instead of waiting for the statement (0.4–3 ms on this
 * machine, on many requests of a client sending a few a minute, issue 15). The statements are the same ones, taken
 * earlier; what it gives up is the lease it took last, unspent when the window ends (at most one lease per key and
 * process, as above). A lease taken ahead that fails is forgotten: the next request takes its own and meets the failure itself.
 * The row's layout (`burst:<keyId>`, points, expire in epoch ms) is the one rate-limiter-flexible used before.
 */
interface BurstLimiter {
  consume(keyId: string, limit: number): Promise<BurstDecision>;
}

export interface BurstDecision {
  allowed: boolean;
  limit: number;
  /** Requests left in the current window. */
  remaining: number;
  /** When the current window ends, epoch ms. */
  resetAt: number;
}

interface BurstLimiterOptions {
  windowMs?: number;
  /** Keys whose lease is remembered; beyond it, ended windows are dropped first, then the oldest leases. */
  maxKeys?: number;
  /** Milliseconds since the epoch (tests move it). */
  clock?: () => number;
}

interface Lease {
  /** The shared window's end, epoch ms, as stored in the row. */
  windowEnd: number;
  /** Points granted to this process and not spent yet. */
  left: number;
  /** The row's count after this process's last lease (every process's points, spent or not). */
  counted: number;
  /** What this process added to the row in this window: `counted` above it means another process uses the key. */
  ownCounted: number;
  /** Leases in a row that found no other process counting the key. */
  aloneStreak: number;
  nextSize: number;
}

const leaseStatement = `
  insert into rate_limits as r (key, points, expire) values ($1, $2, $3::bigint + $4::bigint)
  on conflict (key) do update set
    points = case when coalesce(r.expire, 0) <= $3 then $2 else r.points + $2 end,
    expire = case when coalesce(r.expire, 0) <= $3 then $3::bigint + $4::bigint else r.expire end
  returning points, expire`;

export function createBurstLimiter(pool: pg.Pool, options: BurstLimiterOptions = {}): BurstLimiter {
  const windowMs = options.windowMs ?? 60_000;
  const maxKeys = options.maxKeys ?? 10_000;
  const clock = options.clock ?? Date.now;
  const leases = new Map<string, Lease>();
  /** The lease statement in flight per key: requests of the same key wait for it instead of sending their own. */
  const inFlight = new Map<string, Promise<void>>();

  async function takeLease(keyId: string, limit: number, now: number): Promise<Lease> {
    const current = leases.get(keyId);
    const size = current !== undefined && current.windowEnd > now ? Math.min(current.nextSize, limit) : 1;
    const { rows } = await pool.query<{ points: number; expire: string }>({
      name: 'herald-burst-lease',
      text: leaseStatement,
      values: [`burst:${keyId}`, size, now, windowMs],
    });
    const counted = rows[0]!.points;
    const windowEnd = Number(rows[0]!.expire);
    const granted = Math.max(0, Math.min(size, limit - (counted - size)));
    const previous = leases.get(keyId);
    const continues = previous !== undefined && previous.windowEnd === windowEnd;
    const ownCounted = (continues ? previous.ownCounted : 0) + size;
    // Growing only from the second lease alone on, a key that two processes take turns with stays at one point a lease.
    const aloneStreak = counted === ownCounted ? (continues ? previous.aloneStreak : 0) + 1 : 0;
    const lease: Lease = {
      windowEnd,
      left: (continues ? previous.left : 0) + granted,
      counted,
      ownCounted,
      aloneStreak,
      nextSize: aloneStreak >= 2 ? Math.min(size * 2, maxLeaseSize(limit)) : 1,
    };
    leases.delete(keyId); // re-inserted last: the most recently leased keys are dropped last
    leases.set(keyId, lease);
    if (leases.size > maxKeys) forgetSome(now, keyId);
    return lease;
  }

  function forgetSome(now: number, keep: string): void {
    for (const [keyId, lease] of leases) if (lease.windowEnd <= now) leases.delete(keyId);
    for (const keyId of leases.keys()) {
      if (leases.size <= maxKeys) break;
      if (keyId !== keep) leases.delete(keyId);
    }
  }

  return {
    async consume(keyId, limit) {
      for (;;) {
        const now = clock();
        const waiting = inFlight.get(keyId);
        if (waiting) {
          await waiting;
          continue;
        }
        const lease = leases.get(keyId);
        if (lease && lease.windowEnd > now) {
          if (lease.left > 0) return spend(keyId, lease, limit);
          if (lease.counted >= limit) return { allowed: false, limit, remaining: 0, resetAt: lease.windowEnd };
        }
        let fresh: Lease;
        try {
          fresh = await leaseNow(keyId, limit, now);
        } finally {
          inFlight.delete(keyId);
        }
        if (fresh.left > 0) return spend(keyId, fresh, limit);
        return { allowed: false, limit, remaining: 0, resetAt: fresh.windowEnd };
      }
    },
  };

  /** `takeLease`, registered as the key's statement in flight (requests of the key wait for it). */
  function leaseNow(keyId: string, limit: number, now: number): Promise<Lease> {
    const pending = takeLease(keyId, limit, now);
    inFlight.set(keyId, pending.then(noop, noop));
    return pending;
  }

  function spend(keyId: string, lease: Lease, limit: number): BurstDecision {
    lease.left -= 1;
    if (lease.left === 0 && lease.aloneStreak >= 2 && lease.counted < limit && !inFlight.has(keyId)) leaseAhead(keyId, limit);
    return { allowed: true, limit, remaining: Math.max(0, limit - lease.counted) + lease.left, resetAt: lease.windowEnd };
  }

  function leaseAhead(keyId: string, limit: number): void {
    leaseNow(keyId, limit, clock()).then(
      () => inFlight.delete(keyId),
      () => inFlight.delete(keyId),
    );
  }
}

function noop(): void {}

/** A twentieth of the limit, at most 100: what one process may hold unspent of a key's window. */
function maxLeaseSize(limit: number): number {
  return Math.max(1, Math.min(100, Math.floor(limit / 20)));
}
