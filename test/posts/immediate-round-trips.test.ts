import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { createActivities } from '../../activities';
import type { DatabaseHandle } from '../../src/db';
import type { AccountRow } from '../../src/db/tables/accounts';
import { createLogger } from '../../src/logger';
import { beginPublishAttempts } from '../../src/posts/attempt-marks';
import { postsInsertOf } from '../../src/posts/repository';
import { recordPublishedAll } from '../../src/posts/attempt-outcomes';
import { loadLimits, reserveQuotaWith } from '../../src/quota/quota';
import { testConfig } from '../helpers/api';
import { countingDatabase } from '../helpers/counting-database';
import { testDatabase } from '../helpers/db';
import { insertXAccount, testSealedBox } from './fixtures';
import { startPostsHarness, type PostsHarness } from './harness';

/**
 * Database round trips of an immediate publish's attempt in the worker (issue 15: PostgreSQL was 7 ms of CPU per
 * publish, most of it per-statement work): the mark with the account's credentials, then the platform call, then the
 * recording with its `post.published` event, each one statement with no BEGIN or COMMIT. Every statement of a pool
 * of its own is counted, so a round trip that comes back fails this test.
 */
const immediateAttemptStatements = 2;

describe('Immediate posts: database round trips of the first attempt (issue 15)', function () {
  this.timeout(120_000);
  let h: PostsHarness;
  let counted: DatabaseHandle | undefined;
  const statements: string[] = [];

  before(async function () {
    h = await startPostsHarness();
    counted = countingDatabase((await testDatabase()).url, statements);
  });
  after(async () => {
    await counted?.close();
    await h?.stop();
  });

  /** `publishing` rows with their reservations, as the create statement leaves them, but no workflow started. */
  async function publishingPosts(accounts: readonly AccountRow[], text: string): Promise<string[]> {
    const rows = accounts.map((account) => ({ id: randomUUID(), user_id: h.api.userId, account_id: account.id, platform: account.platform, text, status: 'publishing' as const }));
    const limits = await loadLimits(h.db, h.api.userId);
    await reserveQuotaWith(h.db, { userId: h.api.userId, limits, now: new Date(), charges: rows.map((row) => ({ postId: row.id, kind: 'post' as const })) }, postsInsertOf(h.db, rows));
    return rows.map((row) => row.id);
  }

  const countedActivities = () =>
    createActivities({ config: testConfig(), db: counted!.db, logger: createLogger('silent'), posts: { adapters: h.standIns.adapters, sealedBox: testSealedBox, taskQueue: h.taskQueue } });

  async function startCounting() {
    // Connections opened outside the count: the pool's first connects are not the post's round trips.
    await Promise.all([counted!.db.selectNoFrom((eb) => eb.lit(1).as('one')).execute(), counted!.db.selectNoFrom((eb) => eb.lit(1).as('one')).execute()]);
    statements.length = 0;
  }

  async function assertPublishedOnce(postId: string, text: string) {
    const row = await h.db.selectFrom('posts').select(['status', 'platform_post_id']).where('id', '=', postId).executeTakeFirstOrThrow();
    assert.equal(row.status, 'published');
    const events = await h.db.selectFrom('events').select(['type', 'data']).where('type', '=', 'post.published').where(sql`data->>'id'`, '=', postId).execute();
    assert.equal(events.length, 1, 'its post.published event, written by the same statement');
    const view = await h.api.request('GET', `/api/v1/posts/${postId}`);
    assert.deepEqual(events[0]!.data, view.body.data, 'the event shows the post as the API does');
    const spent = await h.db.selectFrom('quota_reservations').select('state').where('post_id', '=', postId).execute();
    assert.deepEqual(spent.map((r) => r.state), ['spent']);
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === text && t.id === row.platform_post_id).length, 1);
  }

  it(`marks, sends and records one immediate post in ${immediateAttemptStatements} statements, exactly once`, async () => {
    const x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const [postId] = await publishingPosts([x], 'counted immediate round trips');
    const activities = countedActivities();
    await startCounting();

    const attempt = await activities.publishToPlatform({ postId: postId!, now: Date.now() });

    assert.equal(attempt.ok && attempt.recorded, true, JSON.stringify(attempt));
    assert.equal(statements.length, immediateAttemptStatements, statements.join('\n'));
    assert.ok(!statements.some((s) => /^(begin|commit)/i.test(s)), statements.join('\n'));
    await assertPublishedOnce(postId!, 'counted immediate round trips');
    // Called again (a repeated activity): the row is already `published`, so it is reported taken and recorded (with
    // the follow-ups still due, none here); nothing is sent or recorded twice.
    const again = await activities.publishToPlatform({ postId: postId!, now: Date.now() });
    assert.deepEqual(again.ok && [again.recorded, again.hasFirstComment, again.hasMedia], [true, false, false]);
    await assertPublishedOnce(postId!, 'counted immediate round trips');
  });

  it("a fan-out's first attempts: one mark for all, then the posts recorded as their platforms answer, each recording one statement", async () => {
    const accounts = [];
    for (let i = 0; i < 3; i++) accounts.push(await insertXAccount(h.db, h.api.userId, h.standIns.x));
    const postIds = await publishingPosts(accounts, 'counted group round trips');
    const activities = countedActivities();
    await startCounting();

    const attempts = await activities.publishGroupToPlatforms({ postIds, now: Date.now() });

    for (const postId of postIds) assert.equal(attempts[postId]?.ok && attempts[postId].recorded, true, JSON.stringify(attempts));
    // The mark of all three, then the recordings: the answers that came while one was in flight go together in the
    // next (the stand-in answers at once, yet each answer may come in a turn of its own and find none in flight: up to
    // one a post then); each recording is one statement, no BEGIN or COMMIT.
    assert.match(statements[0]!, /^with "marked" as \(update "posts"/, statements.join('\n'));
    assert.ok(statements.length >= immediateAttemptStatements && statements.length <= 1 + postIds.length, statements.join('\n'));
    assert.ok(statements.slice(1).every((s) => /^\s*with published as \(/.test(s)), statements.join('\n'));
    assert.ok(!statements.some((s) => /^(begin|commit)/i.test(s)), statements.join('\n'));
    for (const postId of postIds) {
      const row = await h.db.selectFrom('posts').select('status').where('id', '=', postId).executeTakeFirstOrThrow();
      assert.equal(row.status, 'published');
      const events = await h.db.selectFrom('events').select('type').where('type', '=', 'post.published').where(sql`data->>'id'`, '=', postId).execute();
      assert.equal(events.length, 1);
    }
  });

  it("a fan-out's posts whose platforms answered are recorded while a slower platform's answer is still awaited", async () => {
    const accounts = [];
    for (let i = 0; i < 3; i++) accounts.push(await insertXAccount(h.db, h.api.userId, h.standIns.x));
    const postIds = await publishingPosts(accounts, 'a group with one slow answer');
    const slowMs = 3_000;
    // The first create to reach X is answered 3 s late; the other two at once.
    h.standIns.x.standIn.inject({ method: 'POST', path: '/2/tweets' }, { kind: 'delay', ms: slowMs }, 1);
    const startedAt = Date.now();
    const group = countedActivities().publishGroupToPlatforms({ postIds, now: Date.now() });

    const statuses = async () => (await h.db.selectFrom('posts').select('status').where('id', 'in', postIds).execute()).map((r) => r.status);
    let seen = await statuses();
    while (seen.filter((status) => status === 'published').length < 2 && Date.now() - startedAt < slowMs - 500) {
      await new Promise((done) => setTimeout(done, 50));
      seen = await statuses();
    }
    // Two answered at once: they are `published` (with their events) while the third still waits for X.
    assert.deepEqual([...seen].sort(), ['published', 'published', 'publishing'], `after ${Date.now() - startedAt} ms`);
    assert.ok(Date.now() - startedAt < slowMs, 'seen before the slow answer came');

    const attempts = await group;
    for (const postId of postIds) assert.equal(attempts[postId]?.ok && attempts[postId].recorded, true, JSON.stringify(attempts));
    assert.deepEqual(await statuses(), ['published', 'published', 'published']);
    for (const postId of postIds) {
      const events = await h.db.selectFrom('events').select('type').where('type', '=', 'post.published').where(sql`data->>'id'`, '=', postId).execute();
      assert.equal(events.length, 1, 'one post.published each');
    }
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === 'a group with one slow answer').length, 3, 'each sent once');
  });

  it('a row written by someone else between the mark and the recording is recorded by the transaction, its event as the row is', async () => {
    const x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const [postId] = await publishingPosts([x], 'hidden while publishing');
    const [marked] = await beginPublishAttempts(counted!.db, [postId!]);
    // The user hides the post while its platform call is out: the view built from the mark (hidden: false) must not
    // be written; the transaction records the post and its event from the row as it is.
    await h.db.updateTable('posts').set({ hidden: true }).where('id', '=', postId!).execute();
    statements.length = 0;
    await recordPublishedAll(counted!.db, [{ postId: postId!, platformPostId: 'p-hidden', url: null, publishedAt: Date.now(), marked: marked! }]);
    assert.ok(statements.length > 2, 'the one-statement write found the row changed and left it to the transaction');
    const events = await h.db.selectFrom('events').select('data').where('type', '=', 'post.published').where(sql`data->>'id'`, '=', postId!).execute();
    assert.equal(events.length, 1);
    assert.equal((events[0]!.data as { hidden: boolean }).hidden, true);
    assert.equal((events[0]!.data as { status: string }).status, 'published');
    // Recorded again (a repeated activity): nothing changes, no second event.
    await recordPublishedAll(counted!.db, [{ postId: postId!, platformPostId: 'p-hidden', url: null, publishedAt: Date.now(), marked: marked! }]);
    assert.equal((await h.db.selectFrom('events').select('id').where('type', '=', 'post.published').where(sql`data->>'id'`, '=', postId!).execute()).length, 1);
  });

  it('an account disconnected between the mark and the recording: the event shows it as the view does', async () => {
    const x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const [postId] = await publishingPosts([x], 'disconnected while publishing');
    const [marked] = await beginPublishAttempts(counted!.db, [postId!]);
    await h.db.updateTable('accounts').set({ active: false, inactive_reason: 'disconnected', credentials_sealed: null }).where('id', '=', x.id).execute();
    await recordPublishedAll(counted!.db, [{ postId: postId!, platformPostId: 'p-gone', url: null, publishedAt: Date.now(), marked: marked! }]);
    const events = await h.db.selectFrom('events').select('data').where('type', '=', 'post.published').where(sql`data->>'id'`, '=', postId!).execute();
    assert.equal(events.length, 1);
    assert.equal((events[0]!.data as { account_id: string | null }).account_id, null);
  });

  it('a recording whose event cannot be written changes nothing: the row stays publishing, its reservation reserved', async () => {
    const x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const [postId] = await publishingPosts([x], 'event refused');
    const [marked] = await beginPublishAttempts(counted!.db, [postId!]);
    await sql`create function test_refuse_published_event() returns trigger language plpgsql as $$
      begin raise exception 'refused for the test'; end $$`.execute(h.db);
    await sql.raw(`create trigger test_refuse_published_event after insert on events for each row when (new.data->>'id' = '${postId}') execute function test_refuse_published_event()`).execute(h.db);
    try {
      await assert.rejects(recordPublishedAll(counted!.db, [{ postId: postId!, platformPostId: 'p-refused', url: null, publishedAt: Date.now(), marked: marked! }]), /refused for the test/);
    } finally {
      await sql`drop trigger test_refuse_published_event on events`.execute(h.db);
      await sql`drop function test_refuse_published_event()`.execute(h.db);
    }
    const row = await h.db.selectFrom('posts').select(['status', 'platform_post_id']).where('id', '=', postId!).executeTakeFirstOrThrow();
    assert.deepEqual(row, { status: 'publishing', platform_post_id: null });
    const reservations = await h.db.selectFrom('quota_reservations').select('state').where('post_id', '=', postId!).execute();
    assert.deepEqual(reservations.map((r) => r.state), ['reserved']);
    // The workflow's retried recording then goes through, once.
    await recordPublishedAll(counted!.db, [{ postId: postId!, platformPostId: 'p-refused', url: null, publishedAt: Date.now(), marked: marked! }]);
    assert.equal((await h.db.selectFrom('events').select('id').where('type', '=', 'post.published').where(sql`data->>'id'`, '=', postId!).execute()).length, 1);
  });

  /** A published post whose first comment is still to be sent, as the post's workflow leaves it for its follow-up. */
  async function publishedWithFirstComment(text: string): Promise<string> {
    const x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const row = { id: randomUUID(), user_id: h.api.userId, account_id: x.id, platform: x.platform, text, status: 'publishing' as const, first_comment_text: `${text}: the comment`, first_comment_status: 'pending' as const };
    const limits = await loadLimits(h.db, h.api.userId);
    const charges = [{ postId: row.id, kind: 'post' as const }, { postId: row.id, kind: 'first_comment' as const }];
    await reserveQuotaWith(h.db, { userId: h.api.userId, limits, now: new Date(), charges }, postsInsertOf(h.db, [row]));
    const attempt = await countedActivities().publishToPlatform({ postId: row.id, now: Date.now() });
    assert.equal(attempt.ok && attempt.recorded, true, JSON.stringify(attempt));
    return row.id;
  }

  async function firstCommentEvents(postId: string) {
    return h.db.selectFrom('events').select('data').where('type', '=', 'first_comment.posted').where(sql`data->>'id'`, '=', postId).execute();
  }

  it(`marks, sends and records a first comment in ${immediateAttemptStatements} statements: the comment stored, the post's event as the API shows it`, async () => {
    const postId = await publishedWithFirstComment('counted first comment');
    const activities = countedActivities();
    await startCounting();

    assert.equal(await activities.publishFirstComment({ postId }), 'posted');

    assert.equal(statements.length, immediateAttemptStatements, statements.join('\n'));
    assert.ok(!statements.some((s) => /^(begin|commit)/i.test(s)), statements.join('\n'));
    const view = (await h.api.request('GET', `/api/v1/posts/${postId}`)).body.data;
    assert.equal(view.first_comment.status, 'posted');
    assert.deepEqual((await firstCommentEvents(postId)).map((e) => e.data), [view], 'one event, the post as the API shows it');
    const comment = await h.db.selectFrom('comments').select(['id', 'own', 'text']).where('post_id', '=', postId).executeTakeFirstOrThrow();
    assert.deepEqual(comment, { id: view.first_comment.comment_id, own: true, text: 'counted first comment: the comment' });
    const reservations = await h.db.selectFrom('quota_reservations').select(['kind', 'state']).where('post_id', '=', postId).orderBy('kind').execute();
    assert.deepEqual(reservations, [{ kind: 'first_comment', state: 'spent' }, { kind: 'post', state: 'spent' }]);
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === 'counted first comment: the comment').length, 1);
    // Sent again (a repeated activity): skipped, nothing sent or recorded twice.
    assert.equal(await activities.publishFirstComment({ postId }), 'skipped');
    assert.equal((await firstCommentEvents(postId)).length, 1);
  });

  it('a post written by someone else while its first comment was sent: recorded by the transaction with the comment stored once, its event as the row is', async () => {
    const postId = await publishedWithFirstComment('first comment, post hidden meanwhile');
    h.standIns.x.standIn.inject({ method: 'POST', path: '/2/tweets' }, { kind: 'delay', ms: 300 });
    const hidden = new Promise((resolve, reject) => setTimeout(() => h.db.updateTable('posts').set({ hidden: true }).where('id', '=', postId).execute().then(resolve, reject), 100));
    await startCounting();

    assert.equal(await countedActivities().publishFirstComment({ postId }), 'posted');
    await hidden;

    assert.ok(statements.some((s) => /^begin/i.test(s)), 'the one-statement record found the post changed and left it to the transaction');
    const view = (await h.api.request('GET', `/api/v1/posts/${postId}`)).body.data;
    assert.equal(view.hidden, true);
    assert.deepEqual((await firstCommentEvents(postId)).map((e) => e.data), [view]);
    const comments = await h.db.selectFrom('comments').select('id').where('post_id', '=', postId).execute();
    assert.deepEqual(comments.map((c) => c.id), [view.first_comment.comment_id], 'the comment stored once, the one the post names');
  });

  it('creates the posts and takes their quota in 1 statement; a refusal over a hard limit takes nothing, with the same 429', async () => {
    const x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const rows = [0, 1].map(() => ({ id: randomUUID(), user_id: h.api.userId, account_id: x.id, platform: x.platform, text: 'counted create', status: 'publishing' as const }));
    const limits = await loadLimits(h.db, h.api.userId);
    const charges = rows.map((row) => ({ postId: row.id, kind: 'post' as const }));
    await startCounting();
    await reserveQuotaWith(counted!.db, { userId: h.api.userId, limits, now: new Date(), charges }, postsInsertOf(counted!.db, rows));
    assert.equal(statements.length, 1, statements.join('\n'));
    const reserved = await h.db.selectFrom('quota_reservations').select('state').where('post_id', 'in', rows.map((r) => r.id)).execute();
    assert.deepEqual(reserved.map((r) => r.state), ['reserved', 'reserved']);

    // Over the Free plan's hard post quota: refused inside the statement, nothing written, the counters untouched.
    const usage = async () => h.db.selectFrom('usage_months').select(['posts', 'scheduled']).where('user_id', '=', h.api.userId).executeTakeFirstOrThrow();
    const before = await usage();
    const free = { ...limits, planName: 'free' as const, postsPerMonth: before.posts + 1, postQuotaHard: true };
    const refused = [0, 1].map(() => ({ ...rows[0]!, id: randomUUID(), text: 'refused create' }));
    await assert.rejects(
      reserveQuotaWith(counted!.db, { userId: h.api.userId, limits: free, now: new Date(), charges: refused.map((row) => ({ postId: row.id, kind: 'post' as const })) }, postsInsertOf(counted!.db, refused)),
      (err: { code?: string; status?: number; message: string }) => {
        assert.equal(err.code, 'usage_limit_exceeded');
        assert.match(err.message, new RegExp(`^Monthly post quota reached: ${before.posts} of ${before.posts + 1} posts used this month on the Free plan; this request needs 2 .* and 1 is left`));
        return true;
      },
    );
    assert.deepEqual(await h.db.selectFrom('posts').select('id').where('id', 'in', refused.map((r) => r.id)).execute(), []);
    assert.deepEqual(await h.db.selectFrom('quota_reservations').select('post_id').where('post_id', 'in', refused.map((r) => r.id)).execute(), []);
    assert.deepEqual(await usage(), before);
  });
});

describe('Immediate posts: database round trips of a whole publish through the API (issue 15)', function () {
  this.timeout(120_000);
  let h: PostsHarness;
  let counted: DatabaseHandle | undefined;
  const statements: string[] = [];
  // The accounts with the plan (one statement), the posts with their quota, the mark with the credentials, the
  // recording with its event. The answer is the view the worker recorded (`PostChangeFeed.recording`): no read of its
  // own. A create whose accounts and plan this process read before writes without reading them (`CreationReads`).
  const immediatePublishStatements = 4;
  const fromTheLastRead = immediatePublishStatements - 1;

  before(async function () {
    const shared = await testDatabase();
    counted = countingDatabase(shared.url, statements, 10);
    h = await startPostsHarness({ database: { ...counted, url: shared.url, name: shared.name } });
  });
  after(async () => {
    await h?.stop();
    await counted?.close();
  });

  it(`an immediate post is ${immediatePublishStatements} statements from request to answer, besides the key and the burst limiter`, async () => {
    const x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    // The key's lookup and the limiter's lease are served from memory once warm (their own tests count them).
    assert.equal((await h.api.request('GET', '/api/v1/posts?limit=1')).status, 200);
    statements.length = 0;
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'counted from request to answer' } });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.data.status, 'published');
    const ofThePublish = statements.filter((s) => !/\b(api_keys|rate_limits)\b/.test(s));
    assert.equal(ofThePublish.length, immediatePublishStatements, ofThePublish.join('\n'));
    assert.ok(!ofThePublish.some((s) => /^\s*(begin|commit)\b/i.test(s)), ofThePublish.join('\n'));
    // The announced view is the post as a read shows it.
    assert.deepEqual(res.body.data, (await h.api.request('GET', `/api/v1/posts/${res.body.data.id}`)).body.data);

    statements.length = 0;
    const again = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'counted from the last read' } });
    assert.equal(again.status, 201, again.text);
    assert.equal(again.body.data.status, 'published');
    const ofTheSecond = statements.filter((s) => !/\b(api_keys|rate_limits)\b/.test(s));
    assert.equal(ofTheSecond.length, fromTheLastRead, ofTheSecond.join('\n'));
    assert.match(ofTheSecond[0]!, /^\s*with written as \(insert into "posts"/, 'the write comes first, with no read before it');
  });

  it('a scheduled create reads its spacing window in one statement; an edit reads its account with the plan in one', async () => {
    const x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    await h.syncClock();
    statements.length = 0;
    const created = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'scheduled, counted', schedule_at: new Date(h.now().getTime() + 24 * 3600_000).toISOString() } });
    assert.equal(created.status, 201, created.text);
    assert.equal(statements.filter((s) => /\bjoin posts p on p\.account_id = w\.account_id\b/.test(s)).length, 1, statements.join('\n'));
    assert.ok(!statements.some((s) => /"scheduled_at" is not null/.test(s)), 'no read of every scheduled post');

    statements.length = 0;
    const edited = await h.api.request('PATCH', `/api/v1/posts/${created.body.data.id}`, { body: { text: 'scheduled, edited' } });
    assert.equal(edited.status, 200, edited.text);
    const reads = statements.filter((s) => /\bfrom "(users|accounts)"/.test(s));
    assert.equal(reads.length, 1, reads.join('\n'));
    assert.match(reads[0]!, /from "users" left join "accounts"/);
    assert.ok(!statements.some((s) => /join posts p on p\.account_id/.test(s)), 'an edit that keeps its time reads no spacing window');
    // Deleted, and its workflow ended, so none of its statements land in the next test's count.
    await h.api.request('DELETE', `/api/v1/posts/${created.body.data.id}`);
    assert.deepEqual(await h.settle(created.body.data.id), { outcome: 'gone' });
  });

  it('a fan-out is answered from the announced views too, each as a read shows it; a post with a first comment is answered by a read', async () => {
    const accounts = [await insertXAccount(h.db, h.api.userId, h.standIns.x), await insertXAccount(h.db, h.api.userId, h.standIns.x)];
    statements.length = 0;
    const fanOut = await h.api.request('POST', '/api/v1/posts', { body: { account_ids: accounts.map((a) => a.id), text: 'a fan-out answered from its views' } });
    assert.equal(fanOut.status, 201, fanOut.text);
    const ofTheFanOut = statements.filter((s) => !/\b(api_keys|rate_limits)\b/.test(s));
    // A single post's statements; its two posts' recordings may be two (recorded as each platform answers).
    const recordings = ofTheFanOut.filter((s) => /^\s*with published as \(/.test(s)).length;
    assert.ok(recordings >= 1 && recordings <= accounts.length, ofTheFanOut.join('\n'));
    assert.equal(ofTheFanOut.length, immediatePublishStatements - 1 + recordings, ofTheFanOut.join('\n'));
    for (const result of fanOut.body.data.results) {
      assert.equal(result.status, 'published');
      assert.deepEqual(result.post, (await h.api.request('GET', `/api/v1/posts/${result.post_id}`)).body.data);
    }
    // Recorded `published` with its first comment still to send: the recording's view is not the answer, the read is.
    const withComment = await h.api.request('POST', '/api/v1/posts', { body: { account_id: accounts[0]!.id, text: 'with a first comment', first_comment: 'under it' } });
    assert.equal(withComment.status, 201, withComment.text);
    assert.equal(withComment.body.data.first_comment.status, 'posted');
    assert.deepEqual(withComment.body.data, (await h.api.request('GET', `/api/v1/posts/${withComment.body.data.id}`)).body.data);
  });
});
