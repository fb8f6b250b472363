/**
 * Records the history of one scheduled post run by an earlier version of the workflows, for the replay tests
 * (`test/posts/replay.test.ts`); how to run it: `test/helpers/record-history.ts`. The post is scheduled through the
 * API and run to `published`. The input carries `dueLeadMs`, so replaying it also passes the `prepare-before-due`
 * patch point.
 */
import { postWorkflowId } from '../../../src/posts/workflow-client';
import { recordOldRun } from '../../helpers/record-history';
import { insertXAccount } from '../fixtures';

recordOldRun(async (h) => {
  const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
  await h.syncClock();
  const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: account.id, text: 'recorded for replay', schedule_at: new Date(h.now().getTime() + 30 * 60_000).toISOString() } });
  const postId: string = res.body.data.id;
  return { workflowId: postWorkflowId(postId), workflowType: 'publishPost', args: [{ postId, scheduledRetryDelaysMs: [60_000], immediateRetryDelaysMs: [], dueLeadMs: 250 }] };
});
