import assert from 'node:assert/strict';
import { commentSyncWorkflowId } from '../../src/comments/sync-client';
import { touchListed } from '../../src/comments/sync-state';
import type { AccountRow } from '../../src/db/tables/accounts';
import { usageMonth } from '../../src/quota/quota';
import type { XStandInUser } from '../standins/x';
import { insertMastodonAccount, insertXAccount } from '../posts/fixtures';
import { startPostsHarness, type PostsHarness } from '../posts/harness';
import { commentsConfig, publish } from './actions-fixtures';

/**
 * The comment-sync workflow under time skipping, through the real listing route: windows per platform, sync=true
 * skipped inside its window, backoff and Retry-After, allowances, platform-side deletions, background refreshes only
 * while the post is read, continue-as-new.
 */
describe('comment sync workflow', function () {
  this.timeout(300_000);
  let h: PostsHarness;
  let x: AccountRow;
  let fan: XStandInUser;

  before(async () => {
    h = await startPostsHarness({ plan: 'agent', config: commentsConfig() });
    x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    fan = h.standIns.x.addUser({ username: 'fan' });
  });
  after(async () => h?.stop());
  afterEach(() => {
    h.standIns.x.standIn.clearFaults();
    h.standIns.mastodon.standIn.clearFaults();
  });

  const list = async (postId: string, query = '', key?: string) => {
    await h.syncClock();
    const res = await h.api.request('GET', `/api/v1/posts/${postId}/comments${query}`, key ? { key } : {});
    return res;
  };
  const searches = () => h.standIns.x.standIn.calls('GET', '/2/tweets/search/recent').length;
  const state = (postId: string) => h.db.selectFrom('comment_sync_states').selectAll().where('post_id', '=', postId).executeTakeFirstOrThrow();
  const usage = async (userId = h.api.userId) => {
    await h.syncClock();
    const row = await h.db.selectFrom('usage_months').selectAll().where('user_id', '=', userId).where('month', '=', usageMonth(h.now())).executeTakeFirst();
    return { syncs: row?.comment_syncs ?? 0, reads: row?.x_comment_reads ?? 0 };
  };
  /** Activities run in real time: wait (bounded) until `check` holds. */
  const eventually = async (check: () => Promise<boolean>, what: string) => {
    for (let i = 0; i < 200; i += 1) {
      if (await check()) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.fail(`timed out waiting for ${what}`);
  };
  const workflowStatus = async (postId: string) => (await h.env.client.workflow.getHandle(commentSyncWorkflowId(postId)).describe()).status.name;

  it('x: sync=true refreshes, is skipped inside the 15-minute window, and refreshes again after it; ids stay stable', async () => {
    const post = await publish(h, x.id, 'x window post');
    h.standIns.x.addReply(post.platform_post_id, fan, 'first!');
    h.standIns.x.addReply(post.platform_post_id, fan, 'second');
    const before = await usage();

    const first = await list(post.id, '?sync=true');
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(first.body.data.map((c: { text: string }) => c.text).sort(), ['first!', 'second']);
    assert.equal(first.body.meta.sync.status, 'ok');
    assert.equal(first.body.meta.sync.reason, null);
    const syncedAt = Date.parse(first.body.meta.sync.synced_at);
    assert.equal(Date.parse(first.body.meta.sync.next_sync_after), syncedAt + 15 * 60_000);
    assert.deepEqual(await usage(), { syncs: before.syncs + 1, reads: before.reads + 2 }, 'one sync, one x read per reply');

    const calls = searches();
    h.standIns.x.addReply(post.platform_post_id, fan, 'third');
    const skipped = await list(post.id, '?sync=true');
    assert.equal(skipped.status, 200);
    assert.equal(skipped.body.data.length, 2, 'inside the window the snapshot answers');
    assert.equal(skipped.body.meta.sync.status, 'ok');
    assert.equal(skipped.body.meta.sync.next_sync_after, first.body.meta.sync.next_sync_after);
    assert.equal(searches(), calls, 'nothing read inside the window');

    await h.env.sleep('15 minutes');
    const again = await list(post.id, '?sync=true');
    assert.deepEqual(again.body.data.map((c: { text: string }) => c.text).sort(), ['first!', 'second', 'third']);
    const idOf = (page: { body: { data: Array<{ id: string; text: string }> } }, text: string) => page.body.data.find((c) => c.text === text)?.id;
    assert.deepEqual([idOf(again, 'first!'), idOf(again, 'second')], [idOf(first, 'first!'), idOf(first, 'second')], 'ids are stable');
    assert.deepEqual(await usage(), { syncs: before.syncs + 2, reads: before.reads + 5 });
  });

  it('mastodon: sync=true after its 1-minute window, auto only after its 2-minute window (the refresh runs behind the answer)', async () => {
    const account = await insertMastodonAccount(h.db, h.api.userId, h.standIns.mastodon);
    const post = await publish(h, account.id, 'toot with replies');
    const visitor = h.standIns.mastodon.addAccount('visitor');
    h.standIns.mastodon.addReply(post.platform_post_id, visitor, 'hello from the fediverse');
    const contexts = () => h.standIns.mastodon.standIn.calls('GET', /\/context$/).length;

    assert.equal((await list(post.id, '?sync=true')).body.data.length, 1);
    const afterFirst = contexts();
    h.standIns.mastodon.addReply(post.platform_post_id, visitor, 'another one');

    await h.env.sleep('61 seconds');
    const auto = await list(post.id);
    assert.equal(auto.body.data.length, 1, 'auto inside its 2-minute window: the snapshot as it was');
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(contexts(), afterFirst, 'auto did not refresh inside its window');
    const onDemand = await list(post.id, '?sync=true');
    assert.equal(onDemand.body.data.length, 2, 'sync=true honoured after one minute');
    assert.equal(contexts(), afterFirst + 1);

    h.standIns.mastodon.addReply(post.platform_post_id, visitor, 'a third');
    await h.env.sleep('121 seconds');
    const due = await list(post.id);
    assert.equal(due.status, 200);
    await eventually(async () => (await h.db.selectFrom('comments').select('id').where('post_id', '=', post.id).execute()).length === 3, 'the auto refresh');
  });

  it('backoff: failures double the wait (up to an hour); a platform Retry-After is used as given', async () => {
    const account = await insertMastodonAccount(h.db, h.api.userId, h.standIns.mastodon);
    const post = await publish(h, account.id, 'flaky toot');
    h.standIns.mastodon.standIn.inject({ path: /\/context$/ }, { kind: 'reply', response: { status: 503, json: { error: 'down' } } }, 1_000);

    const waits: number[] = [];
    for (let i = 0; i < 3; i += 1) {
      const res = await list(post.id, '?sync=true');
      assert.equal(res.status, 200, 'a failed refresh with nothing stored is still a 200 (error is not a no-snapshot refusal)');
      assert.equal(res.body.meta.sync.status, 'error');
      assert.match(res.body.meta.sync.reason, /refresh failed/);
      const s = await state(post.id);
      // Measured from the refresh itself (its workflow time is recorded as updated_at).
      waits.push(s.next_sync_after!.getTime() - s.updated_at.getTime());
      assert.equal(s.consecutive_failures, i + 1);
      await h.env.sleep(waits[i]! + 1000);
    }
    assert.deepEqual(waits, [120_000, 240_000, 480_000]);
    h.standIns.mastodon.standIn.clearFaults();

    const limitedPost = await publish(h, account.id, 'rate limited toot');
    // The adapter reads the reset against the real clock: ten real minutes from now, not the 2-minute first backoff.
    h.standIns.mastodon.rateLimit(new RegExp(`${limitedPost.platform_post_id}/context$`), new Date(Date.now() + 10 * 60_000), 1_000);
    const limited = await list(limitedPost.id, '?sync=true');
    assert.equal(limited.status, 429, 'rate limited with nothing stored: the refusal is the answer');
    assert.equal(limited.body.error.code, 'comment_sync_rate_limited');
    assert.match(limited.body.error.message, /Mastodon is rate limiting comment reads/);
    assert.ok(Number(limited.headers.get('retry-after')) > 500, limited.headers.get('retry-after') ?? 'no Retry-After');
    const s = await state(limitedPost.id);
    assert.equal(s.status, 'rate_limited');
    const retryAfterMs = s.next_sync_after!.getTime() - s.updated_at.getTime();
    assert.ok(Math.abs(retryAfterMs - 600_000) < 5_000, `the platform's Retry-After, not the doubled backoff (${retryAfterMs} ms)`);
    h.standIns.mastodon.standIn.clearFaults();

    await h.env.sleep(retryAfterMs + 1000);
    const recovered = await list(limitedPost.id, '?sync=true');
    assert.equal(recovered.body.meta.sync.status, 'ok');
    assert.equal((await state(limitedPost.id)).consecutive_failures, 0);
  });

  it('x on Free: sync.status plan from the first listing, nothing read; sync=true too (200, not an error)', async () => {
    const free = await h.api.newUser('free');
    const account = await insertXAccount(h.db, free.userId, h.standIns.x);
    const post = await publish(h, account.id, 'free x post', {}, free.apiKey);
    h.standIns.x.addReply(post.platform_post_id, fan, 'unseen');
    const calls = searches();
    for (const query of ['', '?sync=true']) {
      const res = await list(post.id, query, free.apiKey);
      assert.equal(res.status, 200);
      assert.equal(res.body.meta.sync.status, 'plan');
      assert.match(res.body.meta.sync.reason, /not included in the Free plan/);
      assert.deepEqual(res.body.data, []);
    }
    assert.equal(searches(), calls);
    assert.deepEqual(await usage(free.userId), { syncs: 0, reads: 0 });
  });

  it('own X credentials: reads are not counted (the sync is)', async () => {
    const own = await insertXAccount(h.db, h.api.userId, h.standIns.x, { ownCredentials: true });
    const post = await publish(h, own.id, 'own creds post');
    for (let i = 0; i < 4; i += 1) h.standIns.x.addReply(post.platform_post_id, fan, `reply ${i}`);
    const before = await usage();
    const res = await list(post.id, '?sync=true');
    assert.equal(res.body.data.length, 4);
    assert.deepEqual(await usage(), { syncs: before.syncs + 1, reads: before.reads });
  });

  it('budget: a spent sync allowance answers the snapshot with status budget, or 402 on sync=true with nothing stored', async () => {
    const user = await h.api.newUser('agent');
    const account = await insertXAccount(h.db, user.userId, h.standIns.x);
    const stored = await publish(h, account.id, 'budget post with snapshot', {}, user.apiKey);
    const empty = await publish(h, account.id, 'budget post without snapshot', {}, user.apiKey);
    h.standIns.x.addReply(stored.platform_post_id, fan, 'kept');
    h.standIns.x.addReply(empty.platform_post_id, fan, 'never read');
    assert.equal((await list(stored.id, '?sync=true', user.apiKey)).body.data.length, 1);
    await h.db.updateTable('usage_months').set({ comment_syncs: 1_000 }).where('user_id', '=', user.userId).execute();

    const refused = await list(empty.id, '?sync=true', user.apiKey);
    assert.equal(refused.status, 402);
    assert.equal(refused.body.error.code, 'comment_read_budget_exceeded');
    assert.match(refused.body.error.message, /comment sync allowance of the Agent plan \(1,000 syncs\) is spent/);

    await h.env.sleep('15 minutes');
    const snapshot = await list(stored.id, '?sync=true', user.apiKey);
    assert.equal(snapshot.status, 200);
    assert.equal(snapshot.body.meta.sync.status, 'budget');
    assert.deepEqual(snapshot.body.data.map((c: { text: string }) => c.text), ['kept']);
    assert.deepEqual(await usage(user.userId), { syncs: 1_000, reads: 1 }, 'refusals spend nothing');
  });

  it('x reads: counted per reply; a refresh stops when the allowance runs out part-way', async () => {
    const user = await h.api.newUser('agent');
    const account = await insertXAccount(h.db, user.userId, h.standIns.x);
    const post = await publish(h, account.id, 'many replies', {}, user.apiKey);
    for (let i = 0; i < 5; i += 1) h.standIns.x.addReply(post.platform_post_id, fan, `r${i}`);
    await h.syncClock();
    await h.db
      .insertInto('usage_months')
      .values({ user_id: user.userId, month: usageMonth(h.now()), x_comment_reads: 497 })
      .onConflict((oc) => oc.columns(['user_id', 'month']).doUpdateSet({ x_comment_reads: 497 }))
      .execute();

    const res = await list(post.id, '?sync=true', user.apiKey);
    assert.equal(res.status, 200);
    assert.equal(res.body.data.length, 3, 'only the replies the allowance covered are stored');
    assert.equal(res.body.meta.sync.status, 'budget');
    assert.match(res.body.meta.sync.reason, /X comment read allowance of the Agent plan \(500 replies\) is spent.*part-way/);
    assert.deepEqual(await usage(user.userId), { syncs: 1, reads: 500 });
  });

  it('platform deletions: recorded at the next refresh, never undone, replies stay on x, and replied returns to false', async () => {
    const post = await publish(h, x.id, 'deletions on x');
    const parent = h.standIns.x.addReply(post.platform_post_id, fan, 'parent comment');
    const child = h.standIns.x.addReply(parent.id, fan, 'reply to parent');
    const ours = h.standIns.x.addReply(post.platform_post_id, fan, 'answered one');
    await list(post.id, '?sync=true');
    const rows = await h.db.selectFrom('comments').selectAll().where('post_id', '=', post.id).execute();
    const byText = (text: string) => rows.find((r) => r.text === text)!;
    // Record `answered one` as answered by `reply to parent` (a stand-in for a reply made through the service).
    await h.db.updateTable('comments').set({ replied: true, replied_at: new Date(), reply_comment_id: byText('reply to parent').id }).where('id', '=', byText('answered one').id).execute();

    parent.deleted = true;
    child.deleted = true;
    await h.env.sleep('15 minutes');
    const res = await list(post.id, '?sync=true&include_deleted=true');
    const seen = Object.fromEntries(res.body.data.map((c: { text: string; deleted: boolean; replied: boolean }) => [c.text, [c.deleted, c.replied]]));
    assert.deepEqual(seen, { 'parent comment': [true, false], 'reply to parent': [true, false], 'answered one': [false, false] });
    const live = await list(post.id, '?sync=false');
    assert.deepEqual(live.body.data.map((c: { text: string }) => c.text), ['answered one']);
    assert.equal(ours.deleted, false);

    parent.deleted = false;
    await h.env.sleep('15 minutes');
    const later = await list(post.id, '?sync=true&include_deleted=true');
    assert.equal(later.body.data.find((c: { text: string }) => c.text === 'parent comment').deleted, true, 'deleted is never undone');
  });

  it('x keeps replies of a deleted comment live (no cascade on x)', async () => {
    const post = await publish(h, x.id, 'cascade check');
    const parent = h.standIns.x.addReply(post.platform_post_id, fan, 'top');
    h.standIns.x.addReply(parent.id, fan, 'under top');
    await list(post.id, '?sync=true');
    parent.deleted = true;
    await h.env.sleep('15 minutes');
    const res = await list(post.id, '?sync=true&include_deleted=true');
    assert.deepEqual(
      // Sorted: the stand-in may give both the same instant, and then the order is the ids'.
      res.body.data.map((c: { text: string; deleted: boolean }) => [c.text, c.deleted]).sort(),
      [['top', true], ['under top', false]],
    );
  });

  it('background refreshes run at the auto window while the post is read, and stop 30 minutes after the last listing', async () => {
    const account = await insertMastodonAccount(h.db, h.api.userId, h.standIns.mastodon);
    const post = await publish(h, account.id, 'watched toot');
    const visitor = h.standIns.mastodon.addAccount('watcher');
    await list(post.id, '?sync=true');
    const contexts = () => h.standIns.mastodon.standIn.calls('GET', `/api/v1/statuses/${post.platform_post_id}/context`).length;
    const start = contexts();

    h.standIns.mastodon.addReply(post.platform_post_id, visitor, 'arrived unlisted');
    await h.env.sleep('150 seconds');
    await eventually(async () => contexts() > start, 'a background refresh');
    await eventually(async () => (await h.db.selectFrom('comments').select('id').where('post_id', '=', post.id).execute()).length === 1, 'the comment stored');

    // Nobody lists it again: refreshes continue only until 30 minutes after the last listing, then the workflow ends.
    await h.env.sleep('35 minutes');
    await eventually(async () => (await workflowStatus(post.id)) === 'COMPLETED', 'the workflow to end');
    const settled = contexts();
    assert.ok(settled - start <= 15, `at most one refresh per 2-minute window while read (${settled - start})`);
    await h.env.sleep('30 minutes');
    assert.equal(contexts(), settled, 'no refresh once nobody reads the post');
  });

  it('sync=false never refreshes: polling with it does not keep the background refreshes going', async () => {
    const account = await insertMastodonAccount(h.db, h.api.userId, h.standIns.mastodon);
    const post = await publish(h, account.id, 'polled toot');
    await list(post.id, '?sync=true');
    const contexts = () => h.standIns.mastodon.standIn.calls('GET', `/api/v1/statuses/${post.platform_post_id}/context`).length;
    for (let i = 0; i < 8; i += 1) {
      await h.env.sleep('5 minutes');
      assert.equal((await list(post.id, '?sync=false')).status, 200);
    }
    // 40 minutes after the one listing that may refresh: the workflow has ended, whatever sync=false polled since.
    await eventually(async () => (await workflowStatus(post.id)) === 'COMPLETED', 'the workflow to end');
    const settled = contexts();
    await h.env.sleep('10 minutes');
    await list(post.id, '?sync=false');
    assert.equal(contexts(), settled, 'nothing read for sync=false');
  });

  it('continues as new when its history grows, keeping its background schedule', async () => {
    const account = await insertMastodonAccount(h.db, h.api.userId, h.standIns.mastodon);
    const post = await publish(h, account.id, 'long lived toot');
    // Read, as a first listing records it, but without the listing starting the workflow (this test starts it with a
    // small history limit); `auto` listings then keep it read (sync=false no longer does, README 2026-12-07).
    await h.syncClock();
    await touchListed(h.db, post.id, h.now());
    const handle = await h.env.client.workflow.signalWithStart('syncComments', {
      workflowId: commentSyncWorkflowId(post.id),
      taskQueue: h.taskQueue,
      args: [{ postId: post.id, historyLimit: 12 }],
      signal: 'commentsListed',
      signalArgs: [],
    });
    const firstRun = handle.signaledRunId;
    for (let i = 0; i < 6; i += 1) {
      await h.env.sleep('2 minutes');
      await list(post.id);
    }
    const described = await h.env.client.workflow.getHandle(commentSyncWorkflowId(post.id)).describe();
    assert.notEqual(described.runId, firstRun, 'a new run carries on');
    assert.equal(described.status.name, 'RUNNING');
    assert.ok((await state(post.id)).synced_at, 'it kept refreshing');
  });
});
