/**
 * Records the history of one scheduled thread run by an earlier version of the workflows, for the replay tests
 * (`test/threads/replay.test.ts`); how to run it: `test/helpers/record-history.ts`. The thread is scheduled through
 * the API and run to `published`, started with the input the current API gives (`dueLeadMs`, `scheduledAt`: what an
 * old worker would meet during a rolling deploy).
 */
import { threadWorkflowId } from '../../../src/threads/workflow-client';
import type { PublishThreadInput } from '../../../workflows/publish-thread';
import { recordOldRun } from '../../helpers/record-history';
import { insertXAccount } from '../../posts/fixtures';

recordOldRun(
  async (h) => {
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    await h.syncClock();
    const at = new Date(h.now().getTime() + 30 * 60_000);
    const res = await h.api.request('POST', '/api/v1/threads', { body: { account_id: account.id, posts: [{ text: 'recorded one' }, { text: 'recorded two' }], schedule_at: at.toISOString() } });
    const threadId: string = res.body.data.thread_id;
    const input: PublishThreadInput = { threadId, scheduledRetryDelaysMs: [60_000], partRetryDelaysMs: [], dueLeadMs: 250, scheduledAt: at.getTime() };
    return { workflowId: threadWorkflowId(threadId), workflowType: 'publishThread', args: [input] };
  },
  { plan: 'pro' },
);
