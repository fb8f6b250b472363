import { condition, continueAsNew, defineSignal, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
// Only the activity types: workflow code never loads activity code.
import type { CredentialActivities, CredentialPlan } from '../activities/credentials';

/**
 * Keeps one account's expiring credential alive (decisions.md "Keeping credentials alive"). Workflow id
 * `credential-<accountId>`.
 *
 *   read the row ── not due ──▶ sleep until 80% of the lifetime (at least 10 min before the end) ──┐
 *        ▲                                                                                          │
 *        └──────────── continue as new ◀── renewed ◀── renew (transient faults retried with backoff) ◀┘
 *                                          refused ──▶ connection_lost, scheduled posts cancelled; ends
 *
 * A credential nothing can renew (x or linkedin without a refresh token or without the app credentials) is read the
 * same way: the run sleeps until it ends, then the account is `connection_lost` and its scheduled posts are cancelled
 * (unless a reconnect stored a new credential meanwhile: the conditional write leaves that one, and the run reads on).
 *
 * The row is the truth: a reconnect or an on-demand renewal (made by a publish that met an ended token) moves the due
 * time, and `credentialChanged` only makes the read happen now. Each renewal starts a fresh run, so the history of an
 * account renewed every 96 minutes for a year stays a handful of events.
 */

export interface KeepCredentialAliveInput {
  accountId: string;
  /** Renewals made by earlier runs (carried over by continue-as-new). */
  renewals?: number;
  /** History length after which a waiting run continues as new (default 500; signals can lengthen a wait). */
  historyLimit?: number;
}

interface KeepCredentialAliveResult {
  outcome: 'lost' | 'stopped';
  renewals: number;
}

const HISTORY_LIMIT = 500;

const credentialChanged = defineSignal('credentialChanged');

const reading = proxyActivities<CredentialActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

// A platform's token endpoint may be down for a while: keep trying, more slowly, for as long as it takes.
const renewing = proxyActivities<CredentialActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '30 seconds', backoffCoefficient: 2, maximumInterval: '10 minutes' },
});

export async function keepCredentialAlive(input: KeepCredentialAliveInput): Promise<KeepCredentialAliveResult> {
  let woken = false;
  setHandler(credentialChanged, () => void (woken = true));
  const renewals = input.renewals ?? 0;
  for (;;) {
    // Reset before reading: a change signalled while the row is being read still wakes the wait that follows.
    woken = false;
    const plan: CredentialPlan = await reading.planCredentialRenewal({ accountId: input.accountId, now: Date.now() });
    if (plan.kind === 'stop') return { outcome: 'stopped', renewals };
    // Only a plan made by this version says `lose`, so no history of an earlier version reaches this branch.
    if (plan.kind === 'lose') {
      const lost = await reading.loseEndedCredential({ accountId: input.accountId, now: Date.now() });
      if (lost.kind === 'lost') return { outcome: 'lost', renewals };
      continue;
    }
    if (plan.kind === 'wait') {
      await condition(() => woken, Math.max(1, plan.until - Date.now()));
      if (workflowInfo().historyLength > (input.historyLimit ?? HISTORY_LIMIT)) {
        await continueAsNew<typeof keepCredentialAlive>({ ...input, renewals });
      }
      continue;
    }
    const outcome = await renewing.renewCredential({ accountId: input.accountId, now: Date.now() });
    if (outcome.kind === 'lost') return { outcome: 'lost', renewals };
    if (outcome.kind === 'gone' || outcome.kind === 'not_renewable') return { outcome: 'stopped', renewals };
    await continueAsNew<typeof keepCredentialAlive>({ ...input, renewals: renewals + (outcome.kind === 'renewed' ? 1 : 0) });
  }
}
