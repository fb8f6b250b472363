/**
 * Access tokens that end, for the stand-ins whose platforms renew long-lived tokens (Threads, Instagram, LinkedIn;
 * X keeps its own rotating pairs in x.ts). Lifetimes are judged by the request's `now` (the stand-in's clock), so
 * time-skipping tests can let them end. protocols.md section 13.
 *
 *   const book = new TokenBook('threads-token', 60 * 86_400)
 *   book.issue(now, lifetimeS?, issuedAt?) → token     book.stateOf(token, now) → 'live' | 'ended' | 'unknown'
 *   book.expire(token)                                  book.renewals: every renewal call and its outcome
 *   graphTokenRenewal(book, grantType, user)  → the handler of Graph's `GET /refresh_access_token` (Threads, Instagram)
 */
import { graphErrors } from './graph';
import type { Handler } from './kit';
type TokenState = 'live' | 'ended' | 'unknown';

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

/**
 * Graph's self-renewal (`th_refresh_token`, `ig_refresh_token`): a token at least 24 h old and not ended gets a new
 * 60-day one, which becomes the user's current token; a younger one answers itself with its remaining lifetime [the
 * stand-in's choice: unverified]; an ended one is 190/463, an unknown one 190. `user.token` as given counts as old and live.
 */
export function graphTokenRenewal(book: TokenBook, grantType: string, user: { get token(): string; set token(value: string) }): Handler {
  return (req) => {
    const token = req.query.access_token ?? '';
    if (req.query.grant_type !== grantType) return graphErrors.invalidParameter(`(#100) grant_type must be ${grantType}`);
    const state = token === user.token && !book.tokens.has(token) ? 'live' : book.stateOf(token, req.now);
    if (state !== 'live') {
      book.renewals.push({ token, outcome: state === 'ended' ? 'ended' : 'unknown' });
      return state === 'ended' ? graphErrors.expiredToken() : graphErrors.invalidToken();
    }
    const entry = book.tokens.get(token);
    if (entry && req.now - entry.issuedAt < 86_400_000) {
      book.renewals.push({ token, outcome: 'too_young' });
      return { json: { access_token: token, token_type: 'bearer', expires_in: Math.floor((entry.expiresAt - req.now) / 1000) } };
    }
    const renewed = book.issue(req.now);
    user.token = renewed;
    book.renewals.push({ token, outcome: 'renewed' });
    return { json: { access_token: renewed, token_type: 'bearer', expires_in: book.lifetimeS } };
  };
}
