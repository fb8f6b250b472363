import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { loadPlatformContext } from '../../src/accounts/platform-context';
import { disownHolds } from '../../src/posts/repository';
import { reconcilePosts } from '../../src/posts/reconcile';
import { groupWorkflowId, postWorkflowId, startPublishWorkflow } from '../../src/posts/workflow-client';
import { insertXAccount, testSealedBox } from './fixtures';
import { startPostsHarness, type PostsHarness } from './harness';

/**
 * A post's workflow terminated (or lost) after its hold claimed the post, while the hold's send is still on its way:
 * the row is `publishing` with its attempt's mark open, and the reconciler starts the workflow again (`disownHolds`,
 * then the start, as `reconcilePosts` does). The new run looked on X at once, found nothing (the old call had not
 * landed yet), and sent the post a second time. Now it waits until the old call can no longer be in flight
 * (`CALL_IN_FLIGHT_MS` after the mark, by the workflow's clock) and then looks.
 */
describe('Posts: a run started again while the old run\'s call may still be in flight', function () {
  this.timeout(120_000);
  let h: PostsHarness;

  before(async () => {
    h = await startPostsHarness({ plan: 'pro' });
  });
  after(async () => h?.stop());

  const realSleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
  const creates = () => h.standIns.x.standIn.requests.filter((r) => r.method === 'POST' && r.path === '/2/tweets');

  it('waits for the old call before it looks: the post that landed meanwhile is found and recorded, not sent twice', async () => {
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const text = 'claimed by a terminated run, its send still out';
    // As the old run's hold left it: claimed at its time, its call marked just now.
    const { id } = await h.db
      .insertInto('posts')
      .values({ user_id: h.api.userId, account_id: account.id, platform: 'x', text, status: 'publishing', scheduled_at: new Date(Date.now() - 1_000) })
      .returning('id')
      .executeTakeFirstOrThrow();
    await sql`update posts set publish_attempt_started_at = now() where id = ${id}`.execute(h.db);
    const before = creates().length;

    const rt = h.reconcilerRuntime();
    await disownHolds(h.db, { postIds: [id], threadIds: [] });
    await startPublishWorkflow(rt, id);
    await realSleep(3_000);
    assert.equal(creates().length, before, 'the new run sent nothing while the old call may be in flight');
    assert.equal((await h.db.selectFrom('posts').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status, 'publishing');

    // The old call lands (its answer, and its run's record, lost with the run); the database's clock then passes the
    // call's room (time skipping moves only the workflow's).
    const { ctx } = await loadPlatformContext(h.db, testSealedBox, account.id);
    const landed = await h.standIns.adapters.x.publish(ctx, { postId: id, text, media: [] });
    await sql`update posts set publish_attempt_started_at = publish_attempt_started_at - interval '11 minutes' where id = ${id}`.execute(h.db);

    assert.deepEqual(await h.env.client.workflow.getHandle(postWorkflowId(id)).result(), { outcome: 'published', firstComment: null });
    const row = await h.db.selectFrom('posts').select(['status', 'platform_post_id']).where('id', '=', id).executeTakeFirstOrThrow();
    assert.deepEqual([row.status, row.platform_post_id], ['published', landed.platformPostId], 'the post the old call made is the one recorded');
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === text).length, 1, 'sent once');
  });

  it('an immediate fan-out restarted as its group waits for the old call too: the post that landed is recorded, not sent twice', async () => {
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const other = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const groupId = randomUUID();
    const text = 'a fan-out whose run was lost, its x call still out';
    // As the lost group run left them: both `publishing`, one's call marked just now (still on its way), the other's
    // never begun.
    const rows = await h.db
      .insertInto('posts')
      .values([account, other].map((a, i) => ({ user_id: h.api.userId, account_id: a.id, platform: 'x', text: `${text} ${i}`, status: 'publishing' as const, group_id: groupId, workflow_id: groupWorkflowId(groupId) })))
      .returning('id')
      .execute();
    const [inFlight, unsent] = rows.map((r) => r.id);
    // Marked at the workflows' now (the test environment's clock, ahead of the database's after earlier skips).
    await h.syncClock();
    await h.db.updateTable('posts').set({ publish_attempt_started_at: h.now() }).where('id', '=', inFlight!).execute();
    const before = creates().length;

    const reconciled = await reconcilePosts(h.reconcilerRuntime());
    assert.ok(reconciled.started.includes(groupWorkflowId(groupId)), 'restarted as its group');
    await realSleep(3_000);
    assert.equal(creates().filter((r) => (r.json as { text?: string })?.text === `${text} 0`).length, 0, 'the post whose call may be in flight was not sent');
    assert.ok(creates().length > before, 'the post never begun went out at once');

    const { ctx } = await loadPlatformContext(h.db, testSealedBox, account.id);
    const landed = await h.standIns.adapters.x.publish(ctx, { postId: inFlight!, text: `${text} 0`, media: [] });

    await h.env.client.workflow.getHandle(groupWorkflowId(groupId)).result();
    const recorded = await h.db.selectFrom('posts').select(['id', 'status', 'platform_post_id']).where('group_id', '=', groupId).execute();
    assert.deepEqual(
      Object.fromEntries(recorded.map((r) => [r.id, r.status])),
      { [inFlight!]: 'published', [unsent!]: 'published' },
    );
    assert.equal(recorded.find((r) => r.id === inFlight)!.platform_post_id, landed.platformPostId, 'the post the old call made is the one recorded');
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === `${text} 0`).length, 1, 'sent once');
  });
  it('a post of a restarted group goes on from the quick retries its lost run spent: tried once more, not three times', async () => {
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const groupId = randomUUID();
    const text = 'a fan-out post whose lost run spent both quick retries';
    // As the lost group run left it: two attempts failed (X answered 503), its last quick retry due now.
    const { id } = await h.db
      .insertInto('posts')
      .values({ user_id: h.api.userId, account_id: account.id, platform: 'x', text, status: 'publishing', group_id: groupId, workflow_id: groupWorkflowId(groupId), retry_count: 2 })
      .returning('id')
      .executeTakeFirstOrThrow();
    const sent = () => creates().filter((r) => (r.json as { text?: string })?.text === text).length;
    h.standIns.x.standIn.inject({ method: 'POST', path: '/2/tweets' }, { kind: 'reply', response: { status: 503, json: { title: 'Service Unavailable' } } }, 5);

    const reconciled = await reconcilePosts(h.reconcilerRuntime());
    assert.ok(reconciled.started.includes(groupWorkflowId(groupId)), 'restarted as its group');
    assert.deepEqual(await h.env.client.workflow.getHandle(groupWorkflowId(groupId)).result(), { [id]: { outcome: 'failed' } });
    const row = await h.db.selectFrom('posts').select(['status', 'retry_count']).where('id', '=', id).executeTakeFirstOrThrow();
    assert.deepEqual([row.status, row.retry_count, sent()], ['failed', 3, 1], 'its one retry left, as an immediate post has (1 s and 3 s), not two more');
    h.standIns.x.standIn.clearFaults();
  });
});
