import { openCredentials } from '../src/accounts/credentials';
import { renewAccountCredential, renewalDueAt, renewerOf, type CredentialRenewalDeps, type RenewalOutcome } from '../src/accounts/credential-renewal';
import { createPostsLifecycle } from '../src/posts/cancel';
import type { PostsRuntime } from '../src/posts/runtime';

/**
 * The activities of `workflows/keep-credential-alive.ts`: read when the account's credential is due, and renew it.
 * The account row is the truth (a reconnect or an on-demand renewal moves the due time; the next read sees it).
 */

export type CredentialPlan =
  /** Nothing to keep alive: the account is gone, switched off, or its credential cannot be renewed. */
  | { kind: 'stop' }
  | { kind: 'wait'; until: number }
  | { kind: 'renew' };

export function createCredentialActivities(rt: PostsRuntime) {
  const deps: CredentialRenewalDeps = { db: rt.db, sealedBox: rt.sealedBox, renewers: rt.renewers, logger: rt.logger, lifecycle: createPostsLifecycle(rt) };
  return {
    /** `now` is the workflow's clock, so its timer and this decision agree (also under time skipping). */
    async planCredentialRenewal(input: { accountId: string; now: number }): Promise<CredentialPlan> {
      const account = await rt.db.selectFrom('accounts').selectAll().where('id', '=', input.accountId).executeTakeFirst();
      if (!account || !account.active || account.credentials_sealed === null) return { kind: 'stop' };
      const renewer = renewerOf(rt.renewers, account, openCredentials(rt.sealedBox, account.user_id, account.credentials_sealed));
      if (!renewer) return { kind: 'stop' };
      const due = renewalDueAt(account, renewer);
      return due > input.now ? { kind: 'wait', until: due } : { kind: 'renew' };
    },

    /**
     * Renews the credential if it is still due. A transient refusal throws (Temporal retries with backoff; the old
     * pair stays stored meanwhile); a refusal for good answers `lost`, the account `connection_lost` and its scheduled
     * posts cancelled.
     */
    async renewCredential(input: { accountId: string; now: number }): Promise<RenewalOutcome> {
      return renewAccountCredential(deps, input.accountId, { now: input.now, onlyIfDue: true });
    },
  };
}

export type CredentialActivities = ReturnType<typeof createCredentialActivities>;
