import type { PlatformAdapters } from '../platforms/registry';
import type { CredentialRenewer } from '../platforms/renewal/types';
import { PlatformFailure, unauthorizedRefusal, type CredentialRefusalRule, type PlatformAdapter, type PlatformContext, type PlatformSlug, type PublishRequest } from '../platforms/types';
import { renewAccountCredential, type CredentialRenewalDeps } from './credential-renewal';
import { refusalHeldMessage, refusedAfterRenewalMessage, renewalPendingMessage } from './credential-sentences';
import { endCallRefusal, recordCallRefusal } from './mass-refusal';
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
 * A refusal nothing could renew (no renewer for the platform, or none for this account; what a refusal looks like is
 * the adapter's `credentialRefusal`, data in its folder) is judged by `recordCallRefusal` (`mass-refusal.ts`): the
 * first is held (`CredentialRefusalHeld`), one 10 minutes later outside a mass event loses the connection; one naming
 * the account's own end (Graph's subcodes, LinkedIn's revoked or expired token) loses it at once. A call that succeeds
 * ends a refusal held for its account (`endCallRefusal`), asked only when the account row it was given carries one.
 * Every platform's adapter is wrapped for that.
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

/**
 * The platform refused the account's credential where nothing could renew it, for the first time lately or amid many
 * such refusals of its accounts (`recordCallRefusal`): perhaps an outage answering 401 to every call, so the
 * connection is kept and nothing was sent; a transient failure (README "Credentials", 2026-12-07 evening). Refused
 * again 10 minutes on, outside a mass event, the refusal is the platform's own `reauthorize` and loses the connection.
 */
class CredentialRefusalHeld extends PlatformFailure {
  constructor(platform: PlatformSlug, detail?: { status?: number; body?: string }) {
    super(platform, 'retryable', refusalHeldMessage(platform), undefined, detail);
    this.name = 'CredentialRefusalHeld';
  }
}

export function keepingCredentialsAlive(adapters: PlatformAdapters, deps: CredentialKeepingDeps): PlatformAdapters {
  const wrapped = { ...adapters } as Record<PlatformSlug, PlatformAdapter>;
  for (const platform of Object.keys(adapters) as PlatformSlug[]) {
    wrapped[platform] = withRenewal(adapters[platform], platform, deps.renewers[platform], deps);
  }
  return wrapped;
}

/**
 * The members whose success shows the platform took the credential: each always sends it (`resolveUrl` may build a
 * link without a call, `findPublished` may answer without one). Typed as the adapter's members, so a rename fails
 * the build instead of silently ending nothing.
 */
const PROVE_CREDENTIAL: ReadonlySet<string> = new Set<keyof PlatformAdapter>(['publish', 'delete', 'listComments', 'commentParents', 'replyToComment', 'hideComment', 'deleteComment', 'readMetrics']);

type AdapterCall = (ctx: PlatformContext, ...args: unknown[]) => Promise<unknown>;

function withRenewal(adapter: PlatformAdapter, platform: PlatformSlug, renewer: CredentialRenewer | undefined, deps: CredentialKeepingDeps): PlatformAdapter {
  const out: Record<string, unknown> = { ...adapter };
  const refusals = adapter.credentialRefusal ?? unauthorizedRefusal;
  for (const [name, member] of Object.entries(adapter)) {
    if (typeof member !== 'function' || name === 'verify') continue;
    const call = member as AdapterCall;
    const proves = PROVE_CREDENTIAL.has(name);
    out[name] = async (ctx: PlatformContext, ...args: unknown[]) => {
      // A publish whose time is up waits no more for a renewal (`PublishRequest.signal`); its create would not begin.
      const stop = name === 'publish' ? (args[0] as PublishRequest | undefined)?.signal : undefined;
      const renewedFirst = renewer && ctx.account && ended(ctx, deps.now()) ? await renewedContext(ctx, renewer, deps, stop) : null;
      const current = renewedFirst && renewedFirst !== 'not_renewable' ? renewedFirst : ctx;
      let answer: unknown;
      try {
        answer = await call(current, ...args);
      } catch (err) {
        // `?.`: a member of an adapter no renewer serves may take something other than a context.
        if (!(err instanceof PlatformFailure) || err.kind !== 'reauthorize' || !current?.account) throw err;
        if (!renewer) throw await refusalNothingRenews(current.account.id, platform, refusals, err, deps);
        if (!renewer.isEndedTokenAnswer(err)) throw err;
        const next = await renewedContext(current, renewer, deps, stop);
        if (next === 'not_renewable') throw await refusalNothingRenews(current.account.id, platform, refusals, err, deps);
        if (!next) throw err;
        try {
          answer = await call(next, ...args);
        } catch (again) {
          if (!(again instanceof PlatformFailure) || again.kind !== 'reauthorize' || !renewer.isEndedTokenAnswer(again)) throw again;
          deps.logger.error({ accountId: next.account!.id, platform: renewer.platform, detail: again.detail }, 'platform refused a credential it had just renewed: taken for its fault, the connection kept');
          throw new CredentialRefusedAfterRenewal(renewer.platform, again.detail);
        }
      }
      if (proves) await refusalEnded(current, platform, deps);
      return answer;
    };
  }
  return out as unknown as PlatformAdapter;
}

/**
 * A refusal nothing could renew: the platform's own failure, losing the connection at once, when it names the
 * account's own end (never recorded, so it holds no other account back); the one `judgedRefusal` answers when it is
 * a refusal as an outage could answer too; else (not a credential refusal at all) the failure as it was.
 */
async function refusalNothingRenews(accountId: string, platform: PlatformSlug, rule: CredentialRefusalRule, err: PlatformFailure, deps: CredentialKeepingDeps): Promise<PlatformFailure> {
  if (rule.namesAccountsOwnEnd(err) || !rule.refusesCredential(err)) return err;
  return judgedRefusal(accountId, platform, err, deps);
}

/**
 * The call succeeded: a refusal the account row carried (`credentialRefusedAt`, as the attempt read it) is over
 * (`endCallRefusal`). Nothing is asked when it carried none. The call's answer stands whatever happens here.
 */
async function refusalEnded(ctx: PlatformContext, platform: PlatformSlug, deps: CredentialKeepingDeps): Promise<void> {
  const seen = ctx?.account?.credentialRefusedAt;
  if (!seen) return;
  const accountId = ctx.account!.id;
  try {
    if (await endCallRefusal(deps.db, accountId, seen)) deps.logger.info({ accountId, platform }, 'platform accepted the credential again: its held refusal is over');
  } catch (err) {
    deps.logger.warn({ err, accountId, platform }, 'could not end the held refusal of a credential the platform accepted; it ends an hour after its last refusal');
  }
}

function ended(ctx: PlatformContext, now: Date): boolean {
  const expiresAt = ctx.account?.credentialExpiresAt;
  return expiresAt !== null && expiresAt !== undefined && expiresAt.getTime() <= now.getTime();
}

/**
 * A refusal nothing could renew, judged (`recordCallRefusal`): the platform's own failure when it loses the connection
 * (the caller marks the account `connection_lost` and cancels its scheduled posts), else `CredentialRefusalHeld`.
 * Logged once as the account's hold begins (an error amid many refusals, a warning for one), then at debug level.
 */
async function judgedRefusal(accountId: string, platform: PlatformSlug, refusal: PlatformFailure, deps: CredentialKeepingDeps): Promise<PlatformFailure> {
  const judged = await recordCallRefusal(deps.db, accountId, platform);
  const fields = { accountId, platform, detail: refusal.detail };
  if (judged.kind === 'confirmed') {
    deps.logger.warn(fields, 'platform refused the credential again after the hold: connection lost');
    return refusal;
  }
  const what = `platform refused a credential nothing can renew: held, the connection kept (${judged.refused} of its accounts refused in the last hour)`;
  if (!judged.first) deps.logger.debug({ ...fields, refused: judged.refused }, what);
  else if (judged.mass) deps.logger.error({ ...fields, refused: judged.refused }, `${what}; many at once: check the platform's status and Herald's app there`);
  else deps.logger.warn({ ...fields, refused: judged.refused }, `${what}; refused again in 10 minutes, it is lost`);
  return new CredentialRefusalHeld(platform, refusal.detail);
}

/**
 * The context with a renewed (or meanwhile replaced) credential; `not_renewable` when nothing can renew it; null when
 * the renewal was refused (the account is lost) or the account is gone. A call whose time is up (`stop`) does not
 * wait to try a transiently failing renewal again: pending at once, as after the last wait.
 */
async function renewedContext(ctx: PlatformContext, renewer: CredentialRenewer, deps: CredentialKeepingDeps, stop?: AbortSignal): Promise<PlatformContext | 'not_renewable' | null> {
  const accountId = ctx.account!.id;
  const patience = deps.patienceMs ?? DEFAULT_PATIENCE_MS;
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  for (let attempt = 0; ; attempt++) {
    let outcome;
    try {
      outcome = await renewAccountCredential(deps, accountId, { now: deps.now().getTime(), staleAccessToken: ctx.credentials.access_token });
    } catch (err) {
      if (!(err instanceof PlatformFailure) || (err.kind !== 'retryable' && err.kind !== 'rate_limited')) throw err;
      if (attempt < patience.length && !stop?.aborted) {
        await sleep(patience[attempt]!);
        continue;
      }
      throw new CredentialRenewalPending(renewer.platform, err.detail);
    }
    if (outcome.kind === 'not_renewable') return 'not_renewable';
    if (outcome.kind !== 'renewed' && outcome.kind !== 'current') return null;
    return (await loadPlatformContext(deps.db, deps.sealedBox, accountId)).ctx;
  }
}
