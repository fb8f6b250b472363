import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import type { PartAttempt, ThreadActivities, ThreadClaim } from '../../activities/threads';
import type { HeldThreadActivities } from '../../activities/threads-held';
import type { ThreadStep } from '../../activities/thread-parts';
import type { PublishThreadInput, PublishThreadResult } from '../../workflows/publish-thread';
import { workflowBundle } from '../posts/harness';
import { createTimeSkippingEnv } from '../helpers/temporal';

/**
 * publishThread after a lost hold, with hand-written activities of the real types: what the rows say decides. A
 * part the hold may have sent is never sent again by the workflow: stored ids are live parts, the next part's
 * outcome is unknown (rolled back, then failed, as a crashed part activity is); rows still scheduled get a new hold.
 * An immediate thread's one activity (`publishThreadNow`) is read the same way when it is lost.
 */
describe('publishThread workflow: a hold lost in the worker, and an immediate thread\'s one activity', function () {
  this.timeout(60_000);
  let env: TestWorkflowEnvironment;

  before(async () => {
    env = await createTimeSkippingEnv();
  });
  after(async () => env?.teardown());

  const claim: Extract<ThreadClaim, { kind: 'publish' }> = {
    kind: 'publish',
    scheduled: true,
    platform: 'x',
    platformName: 'X',
    parts: [1, 2, 3].map((n) => ({ postId: `p${n}`, threadOrder: n })),
    firstCommentPostId: null,
    rollbackSupported: true,
    hasMedia: false,
  };
  const live = (n: number): PartAttempt => ({ ok: true, platformPostId: `x-${n}`, url: null });

  /** `immediate`: the thread's request waits (no schedule): its one activity is `publishThreadNow`, not a hold. */
  /** `look`: what a part's call finds of a part whose outcome was unknown (its mark open, it looks first): the part live, or nothing to tell. */
  /**
   * `in flight` (a state): the rows of a hold lost after part 1, part 2's call marked a moment before the loss: read with
   * the loss's time (`lostAt`), a wait until the call can no longer land (`CALL_IN_FLIGHT_MS`); read without, the
   * parts as stored. `claims`: what `claimThread` answers in turn (then `gone`).
   */
  async function run(
    holds: Array<ThreadStep | 'lost'>,
    states: Array<ThreadStep | 'scheduled' | 'in flight'>,
    immediate = false,
    look: 'finds' | 'cannot tell' = 'finds',
    claims: ThreadClaim[] = [],
  ): Promise<{ result: PublishThreadResult; calls: string[] }> {
    const calls: string[] = [];
    let at = 0;
    let callLandsBy = 0;
    const activities: Partial<ThreadActivities & HeldThreadActivities> = {
      async publishThreadWhenDue() {
        calls.push('hold');
        const next = holds.shift()!;
        if (next === 'lost') throw new Error('worker lost');
        return next;
      },
      async publishThreadNow() {
        calls.push('now');
        const next = holds.shift()!;
        if (next === 'lost') throw new Error('worker lost');
        return next;
      },
      async heldThreadState(input) {
        calls.push('state');
        const state = states.shift()!;
        if (state === 'in flight') {
          if (input.lostAt === undefined) return { claim, sent: [live(1), null] };
          callLandsBy = input.lostAt + 10 * 60_000;
          return { claim: { kind: 'wait', until: callLandsBy, retry: { failures: 0, notBefore: callLandsBy } } };
        }
        return state === 'scheduled' ? { claim: { kind: 'wait', until: at } } : state;
      },
      async claimThread(input) {
        calls.push(callLandsBy > 0 && input.now < callLandsBy ? 'claim while the call may be out' : 'claim');
        return claims.shift() ?? { kind: 'gone' };
      },
      async publishThreadPart(input) {
        calls.push(`publish ${input.postId}`);
        if (look === 'cannot tell') return { ok: false, kind: 'unknown_outcome', message: 'X did not confirm whether the post was published; check the account before sending it again.', retryAfterSeconds: null };
        return live(Number(input.postId.slice(1)));
      },
      async removeThreadPart(input) {
        calls.push(`remove ${input.platformPostId}`);
        return 'removed';
      },
      async recordThreadPublished() {
        calls.push('record');
      },
      async failThread(input) {
        calls.push(`fail: ${input.message}`);
      },
      async discardThread(input) {
        calls.push(`discard: ${input.message}`);
      },
      async cleanupThreadMedia() {
        calls.push('cleanup');
        return 0;
      },
    };
    const taskQueue = `threads-held-${randomUUID()}`;
    const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: await workflowBundle(), activities });
    at = (await env.currentTimeMs()) + 3_600_000;
    const input: PublishThreadInput = { threadId: 't', scheduledRetryDelaysMs: [60_000], partRetryDelaysMs: [1_000], dueLeadMs: 60_000, ...(immediate ? { immediate } : { scheduledAt: at }) };
    const result = await worker.runUntil(env.client.workflow.execute('publishThread', { taskQueue, workflowId: `thread-${randomUUID()}`, args: [input] }));
    return { result: result as PublishThreadResult, calls };
  }

  it('lost after the first part went out: that part is live, the second unknown, never sent blindly: its call looks first and the part found carries the thread on', async () => {
    const { result, calls } = await run(['lost'], [{ claim, sent: [live(1), null] }]);
    assert.deepEqual(calls, ['hold', 'state', 'publish p2', 'publish p3', 'record']);
    assert.deepEqual(result, { outcome: 'published', firstComment: null });
  });

  it('lost after the first part went out, the second not to be told by its look: rolled back, failed', async () => {
    const { result, calls } = await run(['lost'], [{ claim, sent: [live(1), null] }], false, 'cannot tell');
    assert.deepEqual(calls, ['hold', 'state', 'publish p2', 'remove x-1', 'fail: X did not confirm whether the post was published; check the account before sending it again (part 2 of 3). The 1 published part was deleted again.']);
    assert.equal(result.outcome, 'failed');
  });

  it('lost while its part\'s call may still be out: the workflow waits until it cannot land, then claims, and every part\'s call looks first', async () => {
    // The real parts' calls answer part 1 from its row and find part 2 landed (its mark open), as the stand-ins do
    // (`test/threads/restart-in-flight.test.ts`); here the order and the wait are what is held.
    const { result, calls } = await run(['lost'], ['in flight'], false, 'finds', [claim]);
    assert.deepEqual(calls, ['hold', 'state', 'claim', 'publish p1', 'publish p2', 'publish p3', 'record'], 'part 2 was called again at once, while the lost call could still land');
    assert.deepEqual(result, { outcome: 'published', firstComment: null });
  });

  it('lost before its claim: the rows are still scheduled at the time, and a new hold sends the thread', async () => {
    const { result, calls } = await run(['lost', { claim, sent: [live(1), live(2), live(3)], recorded: true }], ['scheduled']);
    assert.deepEqual(calls, ['hold', 'state', 'hold']);
    assert.deepEqual(result, { outcome: 'published', firstComment: null });
  });

  it('a hold that stopped sending (its time was up) leaves the rest of the parts to the workflow, which records the thread', async () => {
    const { result, calls } = await run([{ claim, sent: [live(1)] }], []);
    assert.deepEqual(calls, ['hold', 'publish p2', 'publish p3', 'record']);
    assert.deepEqual(result, { outcome: 'published', firstComment: null });
  });

  describe('an immediate thread, sent from one local activity', () => {
    const now = { ...claim, scheduled: false };

    it('lost after the first part went out: the second unknown, its look cannot tell; rolled back, discarded', async () => {
      const { result, calls } = await run(['lost'], [{ claim: now, sent: [live(1), null] }], true, 'cannot tell');
      assert.deepEqual(calls, ['now', 'state', 'publish p2', 'remove x-1', 'discard: X did not confirm whether the post was published; check the account before sending it again (part 2 of 3). The 1 published part was deleted again.']);
      assert.equal(result.outcome, 'failed');
    });

    it('its activity failed while a part\'s call may still be out (its time up, the call hung): the workflow waits until it cannot land, then claims, and the calls look first', async () => {
      const { result, calls } = await run(['lost'], ['in flight'], true, 'finds', [now]);
      assert.deepEqual(calls, ['now', 'state', 'claim', 'publish p1', 'publish p2', 'publish p3', 'record'], 'part 2 was called again at once, while the hung call could still land');
      assert.deepEqual(result, { outcome: 'published', firstComment: null });
    });

    it('stopped sending (its time was up): the workflow sends the rest and records the thread', async () => {
      const { result, calls } = await run([{ claim: now, sent: [live(1)] }], [], true);
      assert.deepEqual(calls, ['now', 'publish p2', 'publish p3', 'record']);
      assert.deepEqual(result, { outcome: 'published', firstComment: null });
    });

    it('sent and recorded whole: nothing is left to the workflow', async () => {
      const { result, calls } = await run([{ claim: now, sent: [live(1), live(2), live(3)], recorded: true }], [], true);
      assert.deepEqual(calls, ['now']);
      assert.deepEqual(result, { outcome: 'published', firstComment: null });
    });
  });
});
