/**
 * Real histories of Herald's workflows as temporal-dev keeps them (each event's encoded HistoryEvent, back to back),
 * made through the API and the real worker in a posts harness: an immediate post's and an immediate fan-out's once
 * closed, a scheduled post's and a scheduled thread's while they wait for their time. For Herald's history
 * dictionaries (`src/temporal/history-dictionaries.ts`): their recorder and the test that they still fit.
 */
import { randomUUID } from 'node:crypto';
import { temporal } from '@temporalio/proto';
import { groupWorkflowId, postWorkflowId } from '../../src/posts/workflow-client';
import { threadWorkflowId } from '../../src/threads/workflow-client';
import type { PostsHarness } from '../posts/harness';
import { insertMastodonAccount, insertXAccount } from '../posts/fixtures';

/** A history's bytes, its events' ends, and the strings of its run's own temporal-dev adds to its dictionary. */
export interface RecordedHistory {
  bytes: Buffer;
  ends: number[];
  own: string;
}

export interface HistoryShapes {
  immediatePost: RecordedHistory;
  scheduledPost: RecordedHistory;
  scheduledThread: RecordedHistory;
  immediateGroup: RecordedHistory;
}

const WEEK_MS = 7 * 86_400_000;

async function historyBytes(h: PostsHarness, workflowId: string, eager: boolean): Promise<RecordedHistory & { types: string[] }> {
  const history = await h.env.client.workflow.getHandle(workflowId).fetchHistory();
  const events = history.events ?? [];
  const encoded = events.map((event) => Buffer.from(temporal.api.history.v1.HistoryEvent.encode(event).finish()));
  const ends: number[] = [];
  encoded.reduce((end, bytes) => (ends.push(end + bytes.length), end + bytes.length), 0);
  // The run's own strings as temporal-dev's `Run.ownStrings` has them: its start request's id is an eager first
  // task's request id, and in no event of a start that was not eager.
  const runId = events[0]?.workflowExecutionStartedEventAttributes?.originalExecutionRunId ?? '';
  const requestId = eager ? (events[2]?.workflowTaskStartedEventAttributes?.requestId ?? '') : randomUUID();
  return { bytes: Buffer.concat(encoded), ends, own: `${workflowId}\n${runId}\n${requestId}`, types: events.map((event) => String(event.eventType)) };
}

/** The history once the run waits on its timer with no workflow task (time does not skip in the harness unless asked). */
async function waitingHistory(h: PostsHarness, workflowId: string): Promise<RecordedHistory> {
  const TIMER_STARTED = String(temporal.api.enums.v1.EventType.EVENT_TYPE_TIMER_STARTED);
  const TASK_COMPLETED = String(temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
  for (let tries = 0; tries < 200; tries++) {
    const { types, ...history } = await historyBytes(h, workflowId, false);
    const completed = types.lastIndexOf(TASK_COMPLETED);
    if (completed >= 0 && types.slice(completed).includes(TIMER_STARTED)) return history;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${workflowId} never waited on a timer`);
}

/** Makes one of each (three X accounts and a Mastodon one; the harness's plan must allow scheduled posts and threads). */
export async function recordHistoryShapes(h: PostsHarness): Promise<HistoryShapes> {
  const [x1, x2, x3] = [await insertXAccount(h.db, h.api.userId, h.standIns.x), await insertXAccount(h.db, h.api.userId, h.standIns.x), await insertXAccount(h.db, h.api.userId, h.standIns.x)];
  const mastodon = await insertMastodonAccount(h.db, h.api.userId, h.standIns.mastodon);
  await h.syncClock();
  const scheduleAt = new Date(h.now().getTime() + WEEK_MS).toISOString();

  const immediate = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x1!.id, text: 'published at once' } });
  const immediatePostId: string = immediate.body.data.id;
  await h.settle(immediatePostId);

  const fanOut = await h.api.request('POST', '/api/v1/posts', { body: { account_ids: [x2!.id, mastodon.id], text: 'fanned out at once' } });
  const groupId: string = fanOut.body.data.group_id;
  await h.env.client.workflow.getHandle(groupWorkflowId(groupId)).result();

  const scheduled = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x3!.id, text: 'waiting a week', schedule_at: scheduleAt } });
  const thread = await h.api.request('POST', '/api/v1/threads', { body: { account_id: mastodon.id, posts: [{ text: 'first part' }, { text: 'second part' }], schedule_at: scheduleAt } });
  if (scheduled.status !== 201 || thread.status !== 201 || immediate.status !== 201 || fanOut.status !== 201) {
    throw new Error(`creates answered ${immediate.status} ${fanOut.status} ${scheduled.status} ${thread.status}: ${JSON.stringify(thread.body)}`);
  }
  return {
    immediatePost: await historyBytes(h, postWorkflowId(immediatePostId), true),
    immediateGroup: await historyBytes(h, groupWorkflowId(groupId), true),
    scheduledPost: await waitingHistory(h, postWorkflowId(scheduled.body.data.id)),
    scheduledThread: await waitingHistory(h, threadWorkflowId(thread.body.data.thread_id)),
  };
}
