/**
 * Records the history of one scheduled post whose first attempt is refused and whose retry publishes, run by an
 * earlier version of the workflows, for the replay tests (`test/posts/replay.test.ts`); how to run it:
 * `test/helpers/record-history.ts`. The run counts and waits by itself (before `retry-state-in-row`).
 */
import { postWorkflowId } from '../../../src/posts/workflow-client';
import { recordOldRun } from '../../helpers/record-history';
import { insertXAccount } from '../fixtures';

const serviceUnavailable = {
  kind: 'reply' as const,
  response: { status: 503, headers: { 'content-type': 'application/json' }, json: { title: 'Service Unavailable', detail: 'Service Unavailable', type: 'about:blank', status: 503 } },
};

recordOldRun(async (h) => {
  const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
  await h.syncClock();
  const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: account.id, text: 'recorded with a retry', schedule_at: new Date(h.now().getTime() + 30 * 60_000).toISOString() } });
  h.standIns.x.standIn.inject({ method: 'POST', path: '/2/tweets' }, serviceUnavailable, 1);
  const postId: string = res.body.data.id;
  return { workflowId: postWorkflowId(postId), workflowType: 'publishPost', args: [{ postId, scheduledRetryDelaysMs: [60_000], immediateRetryDelaysMs: [], dueLeadMs: 250 }] };
});
