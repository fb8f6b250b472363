import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { createActivities } from '../../activities';
import type { DatabaseHandle } from '../../src/db';
import type { AccountRow } from '../../src/db/tables/accounts';
import { createLogger } from '../../src/logger';
import { postsInsertOf } from '../../src/posts/repository';
import { loadLimits, reserveQuotaWith } from '../../src/quota/quota';
import { testConfig } from '../helpers/api';
import { countingDatabase } from '../helpers/counting-database';
import { testDatabase } from '../helpers/db';
import { insertXAccount, testSealedBox } from '../posts/fixtures';
import { startPostsHarness, type PostsHarness } from '../posts/harness';

/**
 * Database round trips of an immediate thread in the worker (issue 15): its parts and their account read in one
 * statement; each part's mark, which stores the part before it; the record of the whole thread with its event, which
 * stores the last part. No BEGIN or COMMIT. Every statement of a pool of its own is counted.
 */
const threeParts = ['counted part one', 'counted part two', 'counted part three'];
/** Read, three marks, the record. */
const threePartStatements = 5;

describe('Immediate threads: database round trips of the parts and the record (issue 15)', function () {
  this.timeout(120_000);
  let h: PostsHarness;
  let counted: DatabaseHandle | undefined;
  const statements: string[] = [];

  before(async function () {
    h = await startPostsHarness({ plan: 'agent' });
    counted = countingDatabase((await testDatabase()).url, statements);
  });
  after(async () => {
    await counted?.close();
    await h?.stop();
  });

  /** A thread's `publishing` parts with their reservations, as the create statement leaves them, but no workflow started. */
  async function publishingThread(account: AccountRow, texts: readonly string[]): Promise<{ threadId: string; partIds: string[] }> {
    const threadId = randomUUID();
    const rows = texts.map((text, i) => ({
      id: randomUUID(),
      user_id: h.api.userId,
      account_id: account.id,
      platform: account.platform,
      text: `${text} ${threadId}`,
      status: 'publishing' as const,
      thread_id: threadId,
      thread_order: i + 1,
    }));
    const limits = await loadLimits(h.db, h.api.userId);
    await reserveQuotaWith(h.db, { userId: h.api.userId, limits, now: new Date(), charges: rows.map((row) => ({ postId: row.id, kind: 'post' as const })) }, postsInsertOf(h.db, rows));
    return { threadId, partIds: rows.map((row) => row.id) };
  }

  const countedActivities = () =>
    createActivities({ config: testConfig(), db: counted!.db, logger: createLogger('silent'), posts: { adapters: h.standIns.adapters, sealedBox: testSealedBox, taskQueue: h.taskQueue } });

  async function startCounting() {
    // Connections opened outside the count: the pool's first connects are not the thread's round trips.
    await Promise.all([counted!.db.selectNoFrom((eb) => eb.lit(1).as('one')).execute(), counted!.db.selectNoFrom((eb) => eb.lit(1).as('one')).execute()]);
    statements.length = 0;
  }

  /** Every part published once, replying to the one before; one `thread.published` event showing the parts as the API does; quota spent. */
  async function assertPublishedOnce(threadId: string, partIds: readonly string[]) {
    const rows = await h.db.selectFrom('posts').select(['id', 'status', 'platform_post_id', 'text']).where('thread_id', '=', threadId).orderBy('thread_order').execute();
    assert.deepEqual(rows.map((r) => r.status), partIds.map(() => 'published'));
    const tweets = rows.map((row) => h.standIns.x.tweets().filter((t) => t.text === row.text));
    assert.deepEqual(tweets.map((sent) => sent.length), partIds.map(() => 1), 'each part sent once');
    assert.deepEqual(tweets.map(([tweet]) => tweet!.id), rows.map((r) => r.platform_post_id), 'each part stored with its platform id');
    const events = await h.db.selectFrom('events').select('data').where('type', '=', 'thread.published').where(sql`data->>'thread_id'`, '=', threadId).execute();
    assert.equal(events.length, 1, 'one thread.published event');
    const views = [];
    for (const id of partIds) views.push((await h.api.request('GET', `/api/v1/posts/${id}`)).body.data);
    assert.deepEqual((events[0]!.data as { posts: unknown[] }).posts, views, 'the event shows the parts as the API does');
    const reservations = await h.db.selectFrom('quota_reservations').select('state').where('post_id', 'in', [...partIds]).execute();
    assert.deepEqual(reservations.map((r) => r.state), partIds.map(() => 'spent'));
  }

  it(`reads, sends and records a 3-part thread in ${threePartStatements} statements, each part stored, exactly once`, async () => {
    const x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const { threadId, partIds } = await publishingThread(x, threeParts);
    const activities = countedActivities();
    await startCounting();

    const step = await activities.publishThreadNow({ threadId });

    assert.equal(step.recorded, true, JSON.stringify(step));
    assert.equal(statements.length, threePartStatements, statements.join('\n'));
    assert.ok(!statements.some((s) => /^(begin|commit)/i.test(s)), statements.join('\n'));
    await assertPublishedOnce(threadId, partIds);
    const replies = h.standIns.x.tweets().filter((t) => t.text.endsWith(threadId));
    assert.deepEqual(replies.map((t) => t.referenced_tweets?.[0]?.id ?? null), [null, replies[0]!.id, replies[1]!.id], 'each part replies to the one before');
    // Run again (a local activity repeated after a lost workflow task): nothing is sent or recorded twice.
    assert.deepEqual((await activities.publishThreadNow({ threadId })).claim, { kind: 'gone' });
    await assertPublishedOnce(threadId, partIds);
  });

  /** `write` made while the first part's platform call is out (the stand-in holds it 300 ms; the write comes at 100). */
  function whileFirstPartIsSent(write: () => Promise<unknown>): Promise<unknown> {
    h.standIns.x.standIn.inject({ method: 'POST', path: '/2/tweets' }, { kind: 'delay', ms: 300 });
    return new Promise((resolve, reject) => setTimeout(() => write().then(resolve, reject), 100));
  }

  it('a part written by someone else while it was sent: stored on its own, and the thread recorded by the transaction, its event as the rows are', async () => {
    const x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const { threadId, partIds } = await publishingThread(x, threeParts);
    const activities = countedActivities();
    // The user hides the first part while its platform call is out: the view its mark returned (hidden: false) must
    // not be what the event shows.
    const hidden = whileFirstPartIsSent(() => h.db.updateTable('posts').set({ hidden: true }).where('id', '=', partIds[0]!).execute());
    await startCounting();

    const step = await activities.publishThreadNow({ threadId });
    await hidden;

    assert.equal(step.recorded, true, JSON.stringify(step));
    assert.ok(statements.some((s) => /^begin/i.test(s)), 'the one-statement record found a part changed and left it to the transaction');
    await assertPublishedOnce(threadId, partIds);
    const [event] = await h.db.selectFrom('events').select('data').where('type', '=', 'thread.published').where(sql`data->>'thread_id'`, '=', threadId).execute();
    assert.equal((event!.data as { posts: Array<{ hidden: boolean }> }).posts[0]!.hidden, true);
  });

  it('an account disconnected while the thread went out: the event shows it as the view does', async () => {
    const x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const { threadId, partIds } = await publishingThread(x, threeParts);
    const activities = countedActivities();
    const disconnected = whileFirstPartIsSent(() => h.db.updateTable('accounts').set({ inactive_reason: 'connection_lost' }).where('id', '=', x.id).execute());

    const step = await activities.publishThreadNow({ threadId });
    await disconnected;

    assert.equal(step.recorded, true, JSON.stringify(step));
    await assertPublishedOnce(threadId, partIds);
  });
});
