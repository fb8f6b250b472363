import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import type { PartAttempt, PartRemoval, ThreadActivities, ThreadClaim, UnconfirmedPart } from '../../activities/threads';
import type { PublishThreadResult } from '../../workflows/publish-thread';
import { workflowBundle } from '../posts/harness';
import { createTimeSkippingEnv } from '../helpers/temporal';

/**
 * The publishThread saga alone, with hand-written activities of the real type: an account that cannot delete
 * (rollback_supported false) is never asked to, a compensation that crashes is logged and leaves that part live
 * without hiding the refusal, and compensations run last-registered first.
 */
describe('publishThread workflow: compensation rules', function () {
  this.timeout(60_000);
  let env: TestWorkflowEnvironment;

  before(async () => {
    env = await createTimeSkippingEnv();
  });
  after(async () => env?.teardown());

  interface Script {
    rollbackSupported: boolean;
    refuseAt: number;
    removal: (platformPostId: string) => PartRemoval;
    /** This part's activity throws (a crash, not a platform answer). */
    crashAt?: number;
    /** Only its first call throws: the call after it (which looks first, its mark open) finds the part live. */
    crashOnce?: boolean;
    /** A scheduled thread (retried, failed and requeued with its bookkeeping), claimed once. */
    scheduled?: boolean;
    /** This part's attempt meets its account's credential being renewed (its look, or its send, stopped). */
    awaitingCredentialAt?: number;
    /** What `awaitThreadCredential` answers: the thread waits, or the hour is over. */
    credentialWaits?: boolean;
    /** What the rollback's look finds of the part the thread stopped at (default: nothing; only a crash's is logged in `calls`). */
    stoppedPart?: UnconfirmedPart;
    /** The refusal at `refuseAt` (default permanent). */
    refusalKind?: 'permanent' | 'retryable';
  }

  async function run(script: Script, parts = 3): Promise<{ result: PublishThreadResult; calls: string[] }> {
    const calls: string[] = [];
    let claimed = false;
    let crashed = false;
    const activities: Partial<ThreadActivities> = {
      async claimThread(): Promise<ThreadClaim> {
        if (claimed) return { kind: 'gone' };
        claimed = true;
        return {
          kind: 'publish',
          scheduled: script.scheduled ?? false,
          platform: 'instagram',
          platformName: 'Instagram',
          parts: Array.from({ length: parts }, (_, i) => ({ postId: `p${i + 1}`, threadOrder: i + 1 })),
          firstCommentPostId: null,
          rollbackSupported: script.rollbackSupported,
        };
      },
      async publishThreadPart(input): Promise<PartAttempt> {
        calls.push(`publish ${input.postId} replyTo=${input.replyTo?.platformPostId ?? '-'} root=${input.replyTo?.rootPlatformPostId ?? '-'}`);
        const n = Number(input.postId.slice(1));
        if (n === script.crashAt && !(script.crashOnce && crashed)) {
          crashed = true;
          throw new Error('worker lost');
        }
        if (n === script.awaitingCredentialAt) return { ok: false, kind: 'retryable', message: 'X access ended; Herald is renewing it.', retryAfterSeconds: null, awaitingCredential: true };
        if (n === script.refuseAt) return { ok: false, kind: script.refusalKind ?? 'permanent', message: 'Instagram refused the post.', retryAfterSeconds: null };
        return { ok: true, platformPostId: `ig-${n}`, url: `https://www.instagram.com/p/ig${n}/` };
      },
      async removeThreadPart(input): Promise<PartRemoval> {
        calls.push(`remove ${input.platformPostId}`);
        return script.removal(input.platformPostId);
      },
      async lookForUnconfirmedPart(input): Promise<UnconfirmedPart> {
        if (script.stoppedPart) calls.push(`look for ${input.postId} replyTo=${input.replyTo?.platformPostId ?? '-'} root=${input.replyTo?.rootPlatformPostId ?? '-'}`);
        return script.stoppedPart ?? { kind: 'absent' };
      },
      async discardThread() {
        calls.push('discard');
      },
      async awaitThreadCredential() {
        calls.push('await credential');
        return script.credentialWaits ? { waiting: true } : { waiting: false, message: 'X access ended and Herald could not renew it for an hour past the thread\'s time.' };
      },
      async requeueThread() {
        calls.push('requeue');
      },
      async failThread() {
        calls.push('fail');
      },
      async cleanupThreadMedia() {
        calls.push('cleanup');
        return 0;
      },
      async recordThreadPublished() {
        calls.push('record');
      },
    };
    const taskQueue = `threads-wf-${randomUUID()}`;
    const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: await workflowBundle(), activities });
    const result = await worker.runUntil(
      env.client.workflow.execute('publishThread', { taskQueue, workflowId: `thread-${randomUUID()}`, args: [{ threadId: 't', scheduledRetryDelaysMs: [60_000], partRetryDelaysMs: [] }] }),
    );
    return { result: result as PublishThreadResult, calls };
  }

  it('parts reply to the previous one with the first as root; compensation runs in reverse order', async () => {
    const { result, calls } = await run({ rollbackSupported: true, refuseAt: 4, removal: () => 'removed' }, 4);
    assert.deepEqual(calls, [
      'publish p1 replyTo=- root=-',
      'publish p2 replyTo=ig-1 root=ig-1',
      'publish p3 replyTo=ig-2 root=ig-1',
      'publish p4 replyTo=ig-3 root=ig-1',
      'remove ig-3',
      'remove ig-2',
      'remove ig-1',
      'discard',
    ]);
    assert.deepEqual(result, {
      outcome: 'failed',
      code: 'upstream_error',
      message: 'Instagram refused the post (part 4 of 4). The 3 published parts were deleted again.',
      rollback: { platform: 'instagram', published: 3, rolled_back: ['ig-3', 'ig-2', 'ig-1'], still_live: [], rollback_supported: true, quota_refunded: true },
    });
  });

  it('an account that cannot delete: nothing is attempted, every published part is reported live, rollback_supported false', async () => {
    const { result, calls } = await run({ rollbackSupported: false, refuseAt: 3, removal: () => assert.fail('no delete may be tried') });
    assert.deepEqual(calls, ['publish p1 replyTo=- root=-', 'publish p2 replyTo=ig-1 root=ig-1', 'publish p3 replyTo=ig-2 root=ig-1', 'discard']);
    assert.deepEqual(result, {
      outcome: 'failed',
      code: 'thread_rollback_incomplete',
      message: 'Instagram refused the post (part 3 of 3). Parts 1, 2 are still live and cannot be deleted through the API for this account; delete them on the platform before sending the thread again.',
      rollback: {
        platform: 'instagram',
        published: 2,
        rolled_back: [],
        still_live: [
          { thread_order: 1, platform_post_id: 'ig-1', platform_post_url: 'https://www.instagram.com/p/ig1/' },
          { thread_order: 2, platform_post_id: 'ig-2', platform_post_url: 'https://www.instagram.com/p/ig2/' },
        ],
        rollback_supported: false,
        quota_refunded: true,
      },
    });
  });

  it('a compensation that crashes is logged, leaves that part live and does not mask the refusal; the others still run', async () => {
    const { result, calls } = await run({
      rollbackSupported: true,
      refuseAt: 3,
      removal: (id) => {
        if (id === 'ig-2') throw new Error('database went away');
        return 'removed';
      },
    });
    // The crashing delete is retried by its preset (3 attempts), then given up on; part 1 is still removed.
    assert.deepEqual(calls.filter((c) => c.startsWith('remove')), ['remove ig-2', 'remove ig-2', 'remove ig-2', 'remove ig-1']);
    assert.equal(result.outcome, 'failed');
    assert.deepEqual(result.outcome === 'failed' && [result.code, result.message, result.rollback.rolled_back, result.rollback.still_live], [
      'thread_rollback_incomplete',
      'Instagram refused the post (part 3 of 3). Part 2 is still live and could not be deleted; delete it on the platform before sending the thread again.',
      ['ig-1'],
      [{ thread_order: 2, platform_post_id: 'ig-2', platform_post_url: 'https://www.instagram.com/p/ig2/' }],
    ]);
  });

  it('a part whose activity crashes (outcome unknown) rolls back what was published instead of failing the workflow', async () => {
    const { result, calls } = await run({ rollbackSupported: true, refuseAt: -1, removal: () => 'removed', crashAt: 2 });
    // Called once more at once (that call looks first), it crashes again: rolled back.
    assert.deepEqual(calls, ['publish p1 replyTo=- root=-', 'publish p2 replyTo=ig-1 root=ig-1', 'publish p2 replyTo=ig-1 root=ig-1', 'remove ig-1', 'discard']);
    assert.deepEqual(result, {
      outcome: 'failed',
      code: 'upstream_error',
      message: 'Instagram did not confirm whether the post was published; check the account before sending it again (part 2 of 3). The 1 published part was deleted again.',
      rollback: { platform: 'instagram', published: 1, rolled_back: ['ig-1'], still_live: [], rollback_supported: true, quota_refunded: true },
    });
  });

  it('the part whose send was not confirmed is looked for first (replying to the part before it): found, it is deleted and counted as rolled back', async () => {
    const stoppedPart: UnconfirmedPart = { kind: 'removed', platformPostId: 'ig-2', url: 'https://www.instagram.com/p/ig2/' };
    const { result, calls } = await run({ rollbackSupported: true, refuseAt: -1, removal: () => 'removed', crashAt: 2, stoppedPart });
    assert.deepEqual(calls, ['publish p1 replyTo=- root=-', 'publish p2 replyTo=ig-1 root=ig-1', 'publish p2 replyTo=ig-1 root=ig-1', 'look for p2 replyTo=ig-1 root=ig-1', 'remove ig-1', 'discard']);
    assert.deepEqual(result, {
      outcome: 'failed',
      code: 'upstream_error',
      message: 'Instagram did not confirm whether the post was published; check the account before sending it again (part 2 of 3). The 2 published parts were deleted again.',
      rollback: { platform: 'instagram', published: 2, rolled_back: ['ig-2', 'ig-1'], still_live: [], rollback_supported: true, quota_refunded: true },
    });
  });

  it('found and not deleted, it is listed still live; not to be told, the thread is said to be maybe live and not retried', async () => {
    const live = await run({ rollbackSupported: true, refuseAt: -1, removal: () => 'removed', crashAt: 2, stoppedPart: { kind: 'live', platformPostId: 'ig-2', url: null } });
    assert.deepEqual(live.result.outcome === 'failed' && [live.result.code, live.result.rollback.published, live.result.rollback.still_live], [
      'thread_rollback_incomplete',
      2,
      [{ thread_order: 2, platform_post_id: 'ig-2', platform_post_url: null }],
    ]);
    // A refusal that may have taken effect (a server error to the create), its look impossible: a scheduled thread
    // would retry it with new parents; it fails at once instead, saying so.
    const unknown = await run({ rollbackSupported: true, refuseAt: 2, refusalKind: 'retryable', removal: () => 'removed', stoppedPart: { kind: 'unknown' } }, 2);
    assert.deepEqual(unknown.result.outcome === 'failed' && [unknown.result.code, unknown.result.message, unknown.result.rollback.rolled_back], [
      'upstream_error',
      'Instagram refused the post (part 2 of 2). Part 2 may have been published: Instagram did not confirm it and Herald could not look for it; check the account before sending the thread again. The 1 published part was deleted again.',
      ['ig-1'],
    ]);
  });

  it('a part whose send went unanswered is called once more at once: that call looks first, and the part found live is kept and the thread carries on', async () => {
    const { result, calls } = await run({ rollbackSupported: true, refuseAt: -1, removal: () => assert.fail('nothing is rolled back'), crashAt: 2, crashOnce: true });
    assert.deepEqual(calls, ['publish p1 replyTo=- root=-', 'publish p2 replyTo=ig-1 root=ig-1', 'publish p2 replyTo=ig-1 root=ig-1', 'publish p3 replyTo=ig-2 root=ig-1', 'record', 'cleanup']);
    assert.deepEqual(result, { outcome: 'published', firstComment: null });
  });

  it("a scheduled thread whose unknown part the rollback's look settled (deleted, or not there), nothing live: retried, not failed", async () => {
    for (const stoppedPart of [{ kind: 'removed', platformPostId: 'ig-2', url: null }, { kind: 'absent' }] satisfies UnconfirmedPart[]) {
      const { result, calls } = await run({ rollbackSupported: true, refuseAt: -1, removal: () => 'removed', crashAt: 2, stoppedPart, scheduled: true });
      assert.deepEqual(calls.slice(3), ['look for p2 replyTo=ig-1 root=ig-1', 'remove ig-1', 'requeue'], stoppedPart.kind);
      assert.deepEqual(result, { outcome: 'gone' }, 'waits for its retry (then finds the thread gone: this test claims once)');
    }
    // Not to be told: failed at once, as before.
    const unknown = await run({ rollbackSupported: true, refuseAt: -1, removal: () => 'removed', crashAt: 2, stoppedPart: { kind: 'unknown' }, scheduled: true });
    assert.deepEqual(unknown.calls.slice(3), ['look for p2 replyTo=ig-1 root=ig-1', 'remove ig-1', 'fail', 'cleanup']);
  });

  it("a scheduled thread's first part whose look a credential renewal stopped waits for the renewal (its mark open), not looked for (that look met the same renewal and failed the thread)", async () => {
    const stoppedPart: UnconfirmedPart = { kind: 'unknown' };
    const waits = await run({ rollbackSupported: true, refuseAt: -1, removal: () => 'removed', awaitingCredentialAt: 1, credentialWaits: true, stoppedPart, scheduled: true });
    assert.deepEqual(waits.calls, ['publish p1 replyTo=- root=-', 'await credential']);
    assert.deepEqual(waits.result, { outcome: 'gone' }, 'waits for the renewal (then finds the thread gone: this test claims once)');
    // The hour over, it will not wait: the look put off is made then, and a part it cannot tell about fails the thread saying so.
    const over = await run({ rollbackSupported: true, refuseAt: -1, removal: () => 'removed', awaitingCredentialAt: 1, credentialWaits: false, stoppedPart, scheduled: true });
    assert.deepEqual(over.calls, ['publish p1 replyTo=- root=-', 'await credential', 'look for p1 replyTo=- root=-', 'fail', 'cleanup']);
    assert.equal(over.result.outcome === 'failed' && over.result.message, "X access ended and Herald could not renew it for an hour past the thread's time (part 1 of 3). Part 1 may have been published: Instagram did not confirm it and Herald could not look for it; check the account before sending the thread again.");
    // A later part is looked for as before (its earlier parts are deleted: a part sent under them could not be found again).
    const later = await run({ rollbackSupported: true, refuseAt: -1, removal: () => 'removed', awaitingCredentialAt: 2, credentialWaits: true, stoppedPart, scheduled: true });
    assert.deepEqual(later.calls.slice(2), ['look for p2 replyTo=ig-1 root=ig-1', 'remove ig-1', 'fail', 'cleanup']);
  });

  it('a change signalled while the row is being read still wakes the wait that follows (a thread moved earlier is not late)', async () => {
    // The first read finds the thread waiting an hour; while it runs, the thread is rescheduled and signalled. The
    // wait must end at once and read again, not sleep to the time the first read saw.
    const claimedAt: number[] = [];
    let signalDuringClaim: (() => Promise<void>) | undefined;
    const activities: Partial<ThreadActivities> = {
      async claimThread(input): Promise<ThreadClaim> {
        claimedAt.push(input.now);
        if (claimedAt.length > 1) return { kind: 'gone' };
        await signalDuringClaim!();
        return { kind: 'wait', until: input.now + 3_600_000 };
      },
    };
    const taskQueue = `threads-wf-${randomUUID()}`;
    const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: await workflowBundle(), activities });
    const result = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start('publishThread', { taskQueue, workflowId: `thread-${randomUUID()}`, args: [{ threadId: 't', scheduledRetryDelaysMs: [60_000], partRetryDelaysMs: [] }] });
      signalDuringClaim = () => handle.signal('threadChanged');
      return handle.result();
    });
    assert.deepEqual(result, { outcome: 'gone' });
    assert.equal(claimedAt.length, 2);
    assert.ok(claimedAt[1]! - claimedAt[0]! < 60_000, `read again ${claimedAt[1]! - claimedAt[0]!} ms later (workflow time), not at the hour`);
  });
});
