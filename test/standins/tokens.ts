/**
 * Access tokens that end, for the stand-ins whose platforms renew long-lived tokens (Threads, Instagram, LinkedIn;
 * X keeps its own rotating pairs in x.ts). Lifetimes are judged by the request's `now` (the stand-in's clock), so
 * time-skipping tests can let them end. protocols.md section 13.
 *
 *   const book = new TokenBook('threads-token', 60 * 86_400)
 *   book.issue(now, lifetimeS?, issuedAt?) → token     book.stateOf(token, now) → 'live' | 'ended' | 'unknown'
 *   book.expire(token)                                  book.renewals: every renewal call and its outcome
 */
export type TokenState = 'live' | 'ended' | 'unknown';

export class TokenBook {
  readonly tokens = new Map<string, { issuedAt: number; expiresAt: number }>();
  readonly renewals: Array<{ token: string; outcome: 'renewed' | 'too_young' | 'ended' | 'unknown' | 'refused' }> = [];
  private serial = 0;

  constructor(
    private readonly prefix: string,
    readonly lifetimeS: number,
  ) {}

  issue(now: number, lifetimeS = this.lifetimeS, issuedAt = now): string {
    const token = `${this.prefix}-${++this.serial}-${Math.random().toString(36).slice(2, 10)}`;
    this.tokens.set(token, { issuedAt, expiresAt: issuedAt + lifetimeS * 1000 });
    return token;
  }

  stateOf(token: string, now: number): TokenState {
    const entry = this.tokens.get(token);
    if (!entry) return 'unknown';
    return entry.expiresAt > now ? 'live' : 'ended';
  }

  /** The token ends now. */
  expire(token: string): void {
    const entry = this.tokens.get(token);
    if (entry) entry.expiresAt = -Infinity;
  }
}
