/**
 * Records the history of one immediate thread run by an earlier version of the workflows, for the replay tests
 * (`test/threads/replay.test.ts`); how to run it: `test/helpers/record-history.ts`. The thread's rows are written
 * as the API writes them (`publishing`, no time: the API would run it at once) and the workflow is started with the
 * input the current API gives (`immediate`: what an old worker would meet during a rolling deploy).
 */
import { randomUUID } from 'node:crypto';
import { threadWorkflowId } from '../../../src/threads/workflow-client';
import type { PublishThreadInput } from '../../../workflows/publish-thread';
import { recordOldRun } from '../../helpers/record-history';
import { insertXAccount } from '../../posts/fixtures';

recordOldRun(
  async (h) => {
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const threadId = randomUUID();
    await h.db
      .insertInto('posts')
      .values(['recorded now one', 'recorded now two'].map((text, i) => ({ user_id: h.api.userId, account_id: account.id, platform: 'x' as const, text, status: 'publishing' as const, thread_id: threadId, thread_order: i + 1 })))
      .execute();
    const input: PublishThreadInput = { threadId, scheduledRetryDelaysMs: [60_000], partRetryDelaysMs: [], dueLeadMs: 250, immediate: true };
    return { workflowId: threadWorkflowId(threadId), workflowType: 'publishThread', args: [input] };
  },
  { plan: 'pro' },
);
