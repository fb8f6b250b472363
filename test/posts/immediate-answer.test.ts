// How an immediate publish learns its answer (issue 15, src/posts/await-settled.ts `startAndAwait`): from the change
// feed's NOTIFY, without a long poll of the workflow's history per publish; the workflow's result only when the feed
// is in doubt (not listening, or cut since the watch was made), or reports a row removed (a failed immediate thread).
import assert from 'node:assert/strict';
import type { Client } from '@temporalio/client';
import type { AccountRow } from '../../src/db/tables/accounts';
import { createLogger } from '../../src/logger';
import { startPostChangeFeed } from '../../src/posts/change-feed';
import { startDatabaseNotifications, type DatabaseNotifications } from '../../src/db/notifications';
import { insertXAccount } from './fixtures';
import { startPostsHarness, type PostsHarness } from './harness';

/** Counts the client's reads of workflow histories (what `WorkflowHandle.result()` long-polls). */
function countHistoryReads(client: Client): { count(): number; restore(): void } {
  const service = client.workflowService;
  const original = service.getWorkflowExecutionHistory;
  let calls = 0;
  service.getWorkflowExecutionHistory = ((request: Parameters<typeof original>[0]) => {
    calls++;
    return original.call(service, request);
  }) as typeof original;
  return { count: () => calls, restore: () => void (service.getWorkflowExecutionHistory = original) };
}

describe('Immediate posts: the answer comes from the change feed (issue 15)', function () {
  this.timeout(60_000);

  describe('with the feed listening', () => {
    let h: PostsHarness;
    let x: AccountRow;
    before(async () => {
      h = await startPostsHarness({ plan: 'pro' });
      x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    });
    after(async () => h?.stop());

    it('answers a single post and a fan-out once published, without reading a workflow history', async () => {
      const reads = countHistoryReads(h.api.deps.temporal!);
      try {
        const single = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'answered by the feed' } });
        assert.equal(single.status, 201, single.text);
        assert.equal(single.body.data.status, 'published');
        const other = await insertXAccount(h.db, h.api.userId, h.standIns.x);
        const fanOut = await h.api.request('POST', '/api/v1/posts', { body: { account_ids: [x.id, other.id], text: 'fan-out answered by the feed' } });
        assert.equal(fanOut.status, 201, fanOut.text);
        assert.deepEqual(fanOut.body.data.results.map((r: { status: string }) => r.status), ['published', 'published']);
        assert.equal(reads.count(), 0);
      } finally {
        reads.restore();
      }
    });

    it('answers a thread published whole without reading its workflow history', async () => {
      const reads = countHistoryReads(h.api.deps.temporal!);
      try {
        const res = await h.api.request('POST', '/api/v1/threads', { body: { account_id: x.id, posts: [{ text: 'feed thread one' }, { text: 'feed thread two' }], first_comment: 'under the thread' } });
        assert.equal(res.status, 201, res.text);
        assert.deepEqual(res.body.data.posts.map((p: { status: string }) => p.status), ['published', 'published']);
        assert.equal(reads.count(), 0);
      } finally {
        reads.restore();
      }
    });

    it('answers a thread that failed (its rows removed) from its workflow result at once, not after the fallback delay', async () => {
      h.standIns.x.standIn.inject({ method: 'POST', path: '/2/tweets' }, { kind: 'delay', ms: 0 }, 1);
      h.standIns.x.standIn.inject(
        { method: 'POST', path: '/2/tweets' },
        { kind: 'reply', response: { status: 403, headers: { 'content-type': 'application/json' }, json: { title: 'Forbidden', detail: 'You are not permitted to perform this action.', type: 'about:blank', status: 403 } } },
      );
      const reads = countHistoryReads(h.api.deps.temporal!);
      try {
        const started = Date.now();
        const res = await h.api.request('POST', '/api/v1/threads', { body: { account_id: x.id, posts: [{ text: 'removed thread one' }, { text: 'removed thread two' }] } });
        assert.equal(res.status, 502, res.text);
        assert.equal(res.body.error.code, 'upstream_error');
        assert.equal(res.body.error.thread_rollback.rolled_back.length, 1);
        assert.ok(reads.count() >= 1, 'the workflow result was read');
        assert.ok(Date.now() - started < 4_000, `answered in ${Date.now() - started} ms`);
      } finally {
        reads.restore();
        h.standIns.x.standIn.clearFaults();
      }
    });
  });

  describe('with the feed unable to listen', () => {
    let deaf: DatabaseNotifications;
    let h: PostsHarness;
    let x: AccountRow;
    before(async () => {
      // A feed pointed at a port nobody listens on never listens: every watch is in doubt from the start.
      deaf = startDatabaseNotifications('postgres://herald@127.0.0.1:1/none', createLogger('silent'));
      h = await startPostsHarness({ posts: { changes: startPostChangeFeed(deaf) } });
      x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    });
    after(async () => {
      await h?.stop();
      await deaf?.close();
    });

    it('answers from the workflow result at once, not after the fallback delay', async () => {
      const reads = countHistoryReads(h.api.deps.temporal!);
      try {
        const started = Date.now();
        const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'answered by the workflow' } });
        assert.equal(res.status, 201, res.text);
        assert.equal(res.body.data.status, 'published');
        assert.ok(reads.count() >= 1, 'the workflow result was read');
        assert.ok(Date.now() - started < 4_000, `answered in ${Date.now() - started} ms`);
      } finally {
        reads.restore();
      }
    });
  });
});
