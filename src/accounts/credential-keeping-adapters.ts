import type { PlatformAdapters } from '../platforms/registry';
import type { CredentialRenewer } from '../platforms/renewal/types';
import { PlatformFailure, type PlatformAdapter, type PlatformContext, type PlatformSlug } from '../platforms/types';
import { renewAccountCredential, type CredentialRenewalDeps } from './credential-renewal';
import { refusedAfterRenewalMessage, renewalPendingMessage } from './credential-sentences';
import { loadPlatformContext } from './platform-context';

/**
 * The adapters every activity uses, with credentials kept alive on demand (decisions.md "Keeping credentials alive"):
 * a call made with a stored credential known to have ended renews it first, and a call the platform answers "token
 * ended" renews it (under the account's lock, see `credential-renewal.ts`) and is made once more with the new token.
 * Concurrent calls that fail together cause one renewal: the others find the token already replaced and reload it.
 *
 * A renewal that fails transiently is tried again in this call after short waits (`patienceMs`), so a post due while
 * the platform's token endpoint hiccups waits for the credential rather than failing; past that it is reported
 * `retryable` and the post's own retries take over. A refused renewal leaves the platform's refusal as it was
 * (`reauthorize`): the caller marks the account `connection_lost` and cancels its scheduled posts, as before.
 * A call refused again with the credential the renewal left (`CredentialRefusedAfterRenewal`) is not a lost connection.
 * `verify` (connect time, no stored account) is left as it is.
 */

interface CredentialKeepingDeps extends CredentialRenewalDeps {
  now(): Date;
  /** Waits between attempts at a transiently failing renewal within one call (default 1 and 3 s). */
  patienceMs?: readonly number[];
  sleep?: (ms: number) => Promise<void>;
}

// Short: an immediate post's request waits on it; a scheduled post waits for the credential in its workflow instead.
const DEFAULT_PATIENCE_MS = [1_000, 3_000];

/**
 * The credential ended and its renewal keeps failing transiently: nothing was sent. A scheduled post waits for the
 * credential (its retries are not spent on this, up to `CREDENTIAL_WAIT_LIMIT_MS` past its time, then with
 * `renewalOverdueMessage`, `src/posts/attempt-outcomes.ts` and `credential-sentences.ts`), and so does a scheduled
 * thread; an immediate one treats it as any transient fault. Its sentence is read only where the failure is final, so
 * it says what happened and what the caller can do (`credential-sentences.ts`).
 */
export class CredentialRenewalPending extends PlatformFailure {
  constructor(platform: PlatformSlug, detail?: { status?: number; body?: string }) {
    super(platform, 'retryable', renewalPendingMessage(platform), undefined, detail);
    this.name = 'CredentialRenewalPending';
  }
}

/**
 * The platform answered "token ended" to a credential its token endpoint had just renewed (or that had just replaced
 * the refused one): the token endpoint, which refuses a revoked or spent grant, took this account's as alive, so the
 * refusal is the platform's fault (an outage answering 401 to every create), not the account's. Taking it for a lost
 * connection lost every account that published during such an outage and cancelled all their scheduled posts
 * (README "Credentials", 2026-12-07); it is a transient failure instead (nothing was sent), retried as any other.
 */
class CredentialRefusedAfterRenewal extends PlatformFailure {
  constructor(platform: PlatformSlug, detail?: { status?: number; body?: string }) {
    super(platform, 'retryable', refusedAfterRenewalMessage(platform), undefined, detail);
    this.name = 'CredentialRefusedAfterRenewal';
  }
}

export function keepingCredentialsAlive(adapters: PlatformAdapters, deps: CredentialKeepingDeps): PlatformAdapters {
  const wrapped = { ...adapters } as Record<PlatformSlug, PlatformAdapter>;
  for (const [platform, renewer] of Object.entries(deps.renewers) as Array<[PlatformSlug, CredentialRenewer]>) {
    wrapped[platform] = withRenewal(adapters[platform], renewer, deps);
  }
  return wrapped;
}

type AdapterCall = (ctx: PlatformContext, ...args: unknown[]) => Promise<unknown>;

function withRenewal(adapter: PlatformAdapter, renewer: CredentialRenewer, deps: CredentialKeepingDeps): PlatformAdapter {
  const out: Record<string, unknown> = { ...adapter };
  for (const [name, member] of Object.entries(adapter)) {
    if (typeof member !== 'function' || name === 'verify') continue;
    const call = member as AdapterCall;
    out[name] = async (ctx: PlatformContext, ...args: unknown[]) => {
      const current = ctx.account && ended(ctx, deps.now()) ? ((await renewedContext(ctx, renewer, deps)) ?? ctx) : ctx;
      try {
        return await call(current, ...args);
      } catch (err) {
        if (!(err instanceof PlatformFailure) || err.kind !== 'reauthorize' || !current.account || !renewer.isEndedTokenAnswer(err)) throw err;
        const next = await renewedContext(current, renewer, deps);
        if (!next) throw err;
        try {
          return await call(next, ...args);
        } catch (again) {
          if (!(again instanceof PlatformFailure) || again.kind !== 'reauthorize' || !renewer.isEndedTokenAnswer(again)) throw again;
          deps.logger.error({ accountId: next.account!.id, platform: renewer.platform, detail: again.detail }, 'platform refused a credential it had just renewed: taken for its fault, the connection kept');
          throw new CredentialRefusedAfterRenewal(renewer.platform, again.detail);
        }
      }
    };
  }
  return out as unknown as PlatformAdapter;
}

function ended(ctx: PlatformContext, now: Date): boolean {
  const expiresAt = ctx.account?.credentialExpiresAt;
  return expiresAt !== null && expiresAt !== undefined && expiresAt.getTime() <= now.getTime();
}

/** The context with a renewed (or meanwhile replaced) credential; null when it cannot be renewed. */
async function renewedContext(ctx: PlatformContext, renewer: CredentialRenewer, deps: CredentialKeepingDeps): Promise<PlatformContext | null> {
  const accountId = ctx.account!.id;
  const patience = deps.patienceMs ?? DEFAULT_PATIENCE_MS;
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  for (let attempt = 0; ; attempt++) {
    let outcome;
    try {
      outcome = await renewAccountCredential(deps, accountId, { now: deps.now().getTime(), staleAccessToken: ctx.credentials.access_token });
    } catch (err) {
      if (!(err instanceof PlatformFailure) || (err.kind !== 'retryable' && err.kind !== 'rate_limited')) throw err;
      if (attempt < patience.length) {
        await sleep(patience[attempt]!);
        continue;
      }
      throw new CredentialRenewalPending(renewer.platform, err.detail);
    }
    if (outcome.kind !== 'renewed' && outcome.kind !== 'current') return null;
    return (await loadPlatformContext(deps.db, deps.sealedBox, accountId)).ctx;
  }
}
