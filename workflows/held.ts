import { ActivityCancellationType, CancellationScope, condition, proxyActivities } from '@temporalio/workflow';
// Only the activity types: workflow code never loads activity code.
import type { PostActivities } from '../activities/posts';
import type { HeldThreadActivities } from '../activities/threads-held';

/** Room for the platform calls after a hold, as `platformCall` gives one. */
const PLATFORM_TIME_MS = 10 * 60_000;

/**
 * A held activity (`publishWhenDue`, `publishThreadWhenDue`): it reaches a platform after the hold, so one attempt.
 * Abandoned, not cancelled, when what it holds changes: a cancel would only reach it through heartbeats, and its
 * claim at the instant refuses a stale hold.
 */
export const heldCall = (holdMs: number) =>
  proxyActivities<PostActivities & HeldThreadActivities>({
    startToCloseTimeout: holdMs + PLATFORM_TIME_MS,
    // A worker that dies during the hold is seen within a minute, not at the hold's end plus the platform time.
    heartbeatTimeout: '1 minute',
    retry: { maximumAttempts: 1 },
    cancellationType: ActivityCancellationType.ABANDON,
  });

/** The workflow's wake-up flag, set by its change signals. */
export interface WakeSignals {
  woken(): boolean;
  consume(): void;
}

/**
 * Runs a held activity while the workflow listens (README "Scheduled bursts"). Its result is the step. A signal makes
 * the workflow look (`changed`): a step from it means the hold went stale (rescheduled to another time), and the hold
 * is abandoned for that step; null, the hold goes on. A hold that fails (its worker lost or shut down) gives `lost()`.
 */
export async function whileHeld<Step>(
  hold: () => Promise<Step>,
  lost: () => Promise<Step>,
  changed: () => Promise<Step | null>,
  signals: WakeSignals,
): Promise<Step> {
  const scope = new CancellationScope();
  let outcome: { step: Step } | 'failed' | undefined;
  void scope.run(hold).then(
    (step) => void (outcome = { step }),
    () => void (outcome = 'failed'),
  );
  for (;;) {
    await condition(() => outcome !== undefined || signals.woken());
    if (outcome) return outcome === 'failed' ? lost() : outcome.step;
    signals.consume();
    const stale = await changed();
    if (outcome || stale === null) continue;
    scope.cancel();
    return stale;
  }
}
