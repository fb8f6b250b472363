import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createActivities } from '../../activities';
import type { AccountRow } from '../../src/db/tables/accounts';
import { createLogger } from '../../src/logger';
import { postWorkflowId } from '../../src/posts/workflow-client';
import { testConfig } from '../helpers/api';
import { insertXAccount, testSealedBox } from './fixtures';
import { activitiesOf, startPostsHarness, type PostsHarness } from './harness';

describe('Scheduled posts: a due post is claimed and attempted in one local activity (issue 15)', function () {
  this.timeout(120_000);
  let h: PostsHarness;
  let x: AccountRow;

  before(async function () {
    h = await startPostsHarness();
    x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
  });
  after(async () => h?.stop());
  afterEach(() => h.standIns.x.standIn.clearFaults());

  const row = (id: string) => h.db.selectFrom('posts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  it('waits with no look at its row, and at the instant claims and publishes in one: no separate claim or attempt', async () => {
    await h.syncClock();
    const at = new Date(h.now().getTime() + 30 * 60_000);
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'due in one step', schedule_at: at.toISOString() } });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(await h.settle(res.body.data.id), { outcome: 'published', firstComment: null });
    const published = await row(res.body.data.id);
    assert.equal(published.status, 'published');
    assert.ok(published.published_at!.getTime() >= at.getTime(), 'never before scheduled_at');
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === 'due in one step').length, 1);
    // Waiting for the time it was created for (no claim, no read), then prepared a lead ahead: the held activity
    // claims and publishes at the instant.
    assert.deepEqual(await activitiesOf(h, postWorkflowId(res.body.data.id)), ['publishWhenDue']);
  });

  it('a refusal at the instant is retried through the same step, and the retry publishes once', async () => {
    await h.syncClock();
    const at = new Date(h.now().getTime() + 40 * 60_000);
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'due, refused once', schedule_at: at.toISOString() } });
    h.standIns.x.standIn.inject(
      { method: 'POST', path: '/2/tweets' },
      { kind: 'reply', response: { status: 503, headers: { 'content-type': 'application/json' }, json: { title: 'Service Unavailable', detail: 'Service Unavailable', type: 'about:blank', status: 503 } } },
      1,
    );
    assert.deepEqual(await h.settle(res.body.data.id), { outcome: 'published', firstComment: null });
    assert.deepEqual({ status: (await row(res.body.data.id)).status, retry_count: (await row(res.body.data.id)).retry_count }, { status: 'published', retry_count: 1 });
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === 'due, refused once').length, 1);
    // The held attempt refused, its record, wait for the retry's time (not held: retries keep the timer), the retry.
    assert.deepEqual(await activitiesOf(h, postWorkflowId(res.body.data.id)), ['publishWhenDue', 'recordFailedAttempt', 'claimAndPublish', 'claimAndPublish']);
  });

  it('a claim the database refuses is reported as no claim (the workflow claims again with retries), never as an attempt', async () => {
    // A real database error: the id is not a UUID, so PostgreSQL refuses the read.
    const activities = createActivities({ config: testConfig(), db: h.db, logger: createLogger('silent'), posts: { adapters: h.standIns.adapters, sealedBox: testSealedBox, taskQueue: h.taskQueue } });
    assert.deepEqual(await activities.claimAndPublish({ postId: 'not-a-uuid', now: Date.now(), notBefore: 0 }), { claim: null });
    // A post that is gone is a claim, with no attempt.
    assert.deepEqual(await activities.claimAndPublish({ postId: randomUUID(), now: Date.now(), notBefore: 0 }), { claim: { kind: 'gone' } });
  });
});
