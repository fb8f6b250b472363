import { openCredentials } from '../src/accounts/credentials';
import { loseEndedCredential, renewAccountCredential, renewalDueAt, renewerOf, type CredentialRenewalDeps, type RenewalOutcome } from '../src/accounts/credential-renewal';
import { createPostsLifecycle } from '../src/posts/cancel';
import type { PostsRuntime } from '../src/posts/runtime';

/**
 * The activities of `workflows/keep-credential-alive.ts`: read when the account's credential is due, and renew it (or,
 * when nothing can renew it, lose the connection once it has ended).
 * The account row is the truth (a reconnect or an on-demand renewal moves the due time; the next read sees it).
 */

export type CredentialPlan =
  /** Nothing to keep alive: the account is gone or lost, switched off with nothing that ends for good, or its credential does not end. */
  | { kind: 'stop' }
  /** Until the credential is due for renewal, or (nothing can renew it) until it ends. */
  | { kind: 'wait'; until: number }
  | { kind: 'renew' }
  /** It ended and nothing can renew it: the connection is lost. */
  | { kind: 'lose' };

export function createCredentialActivities(rt: PostsRuntime) {
  const deps: CredentialRenewalDeps = { db: rt.db, sealedBox: rt.sealedBox, renewers: rt.renewers, logger: rt.logger, lifecycle: createPostsLifecycle(rt) };
  return {
    /** `now` is the workflow's clock, so its timer and this decision agree (also under time skipping). */
    async planCredentialRenewal(input: { accountId: string; now: number }): Promise<CredentialPlan> {
      const account = await rt.db.selectFrom('accounts').selectAll().where('id', '=', input.accountId).executeTakeFirst();
      if (!account || account.credentials_sealed === null || account.inactive_reason === 'disconnected' || account.inactive_reason === 'connection_lost') return { kind: 'stop' };
      const renewer = renewerOf(rt.renewers, account, openCredentials(rt.sealedBox, account.user_id, account.credentials_sealed));
      // Switched off, a token that renews itself is still renewed: ended, it could never be renewed again (protocols.md
      // section 13), and switching the account back on would need a reconnect. A refresh token renews an ended one later.
      if (!account.active && renewer?.renewsWith !== 'access_token') return { kind: 'stop' };
      if (renewer) {
        const due = renewalDueAt(account, renewer);
        return due > input.now ? { kind: 'wait', until: due } : { kind: 'renew' };
      }
      // Nothing can renew it: it works until it ends, then the account is `connection_lost` (decisions.md).
      const endsAt = account.credential_expires_at?.getTime();
      if (endsAt === undefined) return { kind: 'stop' };
      return endsAt > input.now ? { kind: 'wait', until: endsAt } : { kind: 'lose' };
    },

    /**
     * Renews the credential if it is still due. A transient refusal throws (Temporal retries with backoff; the old
     * pair stays stored meanwhile); a refusal for good answers `lost`, the account `connection_lost` and its scheduled
     * posts cancelled.
     * `now` is the workflow's clock when it scheduled the activity, and every retry gets that same value: the new
     * token's issue time and end count from the later of it and this attempt's clock, so a renewal that succeeds after
     * hours of retries (a token endpoint down) does not store an end already past.
     */
    async renewCredential(input: { accountId: string; now: number }): Promise<RenewalOutcome> {
      return renewAccountCredential(deps, input.accountId, { now: Math.max(input.now, Date.now()), onlyIfDue: true });
    },

    /**
     * The credential nothing can renew has ended: `lost`, the account `connection_lost` and its scheduled posts
     * cancelled; `current` when a reconnect stored a new credential meanwhile (the next read plans for that one).
     */
    async loseEndedCredential(input: { accountId: string; now: number }): Promise<RenewalOutcome> {
      return loseEndedCredential(deps, input.accountId, input.now);
    },
  };
}

export type CredentialActivities = ReturnType<typeof createCredentialActivities>;
