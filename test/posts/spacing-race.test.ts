import assert from 'node:assert/strict';
import type { PoolClient } from 'pg';
import type { AccountRow } from '../../src/db/tables/accounts';
import { insertXAccount } from './fixtures';
import { startPostsHarness, type PostsHarness } from './harness';

/**
 * Two requests for one account at the same moment, each within 5 minutes of the other (README "Post rules", the
 * spacing rule). Each reads the account's scheduled times before either writes; a lock the test holds on the user's
 * usage row (which every create takes before it commits) keeps both waiting there until both have read, so without
 * the database's constraint both would be written.
 */
describe('Scheduled posts: spacing under simultaneous requests', function () {
  this.timeout(120_000);
  let h: PostsHarness;
  let x: AccountRow;

  before(async function () {
    h = await startPostsHarness();
    x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    // The user's usage row, which the test holds, exists from a post hours away from the others.
    await h.syncClock();
    const earlier = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'earlier', schedule_at: inMinutes(600) } });
    assert.equal(earlier.status, 201, earlier.text);
  });
  after(async () => h?.stop());

  const inMinutes = (minutes: number) => new Date(h.now().getTime() + minutes * 60_000).toISOString();
  const scheduledOf = async (accountId: string) =>
    (await h.db.selectFrom('posts').select(['scheduled_at', 'thread_id']).where('account_id', '=', accountId).where('status', '=', 'scheduled').execute());

  /** A row lock held in a transaction of its own until `release`. */
  async function holdRow(lock: string, params: unknown[]): Promise<{ release(): Promise<void> }> {
    const holder: PoolClient = await h.api.deps.pool.connect();
    await holder.query('begin');
    await holder.query(lock, params);
    return {
      release: async () => {
        await holder.query('commit').finally(() => holder.release());
      },
    };
  }

  /**
   * Holds the user's usage row while `requests` start one after the other (each once the one before waits for a
   * lock), then lets them go in that order.
   */
  async function heldTogether<T>(requests: Array<() => Promise<T>>): Promise<T[]> {
    const held = await holdRow('select 1 from usage_months where user_id = $1 for update', [h.api.userId]);
    const answers: Array<Promise<T>> = [];
    try {
      for (const request of requests) {
        answers.push(request());
        await untilWaiting(answers.length);
      }
    } finally {
      await held.release();
    }
    return Promise.all(answers);
  }

  /** Watched from a connection of its own: inside the holder's transaction pg_stat_activity stays as first read. */
  async function untilWaiting(count: number): Promise<void> {
    for (let waited = 0; ; waited += 20) {
      const { rows } = await h.api.deps.pool.query<{ n: string }>(`select count(*) as n from pg_stat_activity where wait_event_type = 'Lock'`);
      if (Number(rows[0]!.n) >= count) return;
      if (waited > 20_000) throw new Error(`only ${rows[0]!.n} of ${count} requests wait for a lock`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it('two posts 2 minutes apart: one is scheduled, the other refused with the rule\'s sentence naming the first', async () => {
    await h.syncClock();
    const times = [inMinutes(120), inMinutes(122)];
    const answers = await heldTogether(times.map((at, i) => () => h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: `race ${i}`, schedule_at: at } })));

    assert.deepEqual(answers.map((a) => a.status).sort(), [201, 400], answers.map((a) => a.text).join('\n'));
    const won = answers.find((a) => a.status === 201)!;
    const lost = answers.find((a) => a.status === 400)!;
    assert.equal(lost.body.error.code, 'bad_request');
    assert.match(lost.body.error.message, new RegExp(`within 5 minutes of another scheduled post on this account \\(${won.body.data.scheduled_at.replace(/[.]/g, '\\.')}\\)`));
    const near = (await scheduledOf(x.id)).filter((row) => Math.abs(row.scheduled_at!.getTime() - Date.parse(times[0]!)) < 10 * 60_000);
    assert.equal(near.length, 1, 'one post holds the slot');
  });

  it('a reschedule 1 minute from a post created meanwhile: the reschedule is refused and keeps its time', async () => {
    await h.syncClock();
    const moving = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'to move', schedule_at: inMinutes(800) } });
    assert.equal(moving.status, 201, moving.text);
    // The reschedule reads the account's times, then waits to write its row; the create is written meanwhile.
    const held = await holdRow('select 1 from posts where id = $1 for update', [moving.body.data.id]);
    let moved: Promise<Awaited<ReturnType<typeof h.api.request>>>;
    try {
      moved = h.api.request('PATCH', `/api/v1/posts/${moving.body.data.id}`, { body: { schedule_at: inMinutes(361) } });
      await untilWaiting(1);
      const created = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'created', schedule_at: inMinutes(360) } });
      assert.equal(created.status, 201, created.text);
    } finally {
      await held.release();
    }
    const refused = await moved;
    assert.equal(refused.status, 400, refused.text);
    assert.match(refused.body.error.message, /within 5 minutes of another scheduled post on this account/);
    const again = await h.api.request('GET', `/api/v1/posts/${moving.body.data.id}`);
    assert.equal(again.body.data.scheduled_at, moving.body.data.scheduled_at);
  });

  const threadAt = (at: string) => () =>
    h.api.request('POST', '/api/v1/threads', { body: { account_id: x.id, posts: [{ text: `thread one ${at}` }, { text: `thread two ${at}` }], schedule_at: at } });
  const postAt = (at: string) => () => h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: `against the thread ${at}`, schedule_at: at } });

  for (const order of ['the thread first', 'the post first'] as const) {
    it(`a thread and a post 3 minutes apart, ${order}: one is scheduled, the other refused; the thread's own parts never clash`, async () => {
      await h.syncClock();
      const [threadTime, postTime] = order === 'the thread first' ? [inMinutes(240), inMinutes(243)] : [inMinutes(300), inMinutes(303)];
      // A thread writes its parts before it takes the usage row, a post after: when the post goes first, each waits
      // for the other and PostgreSQL ends one of the two (a deadlock); that one is judged again like a clash.
      const requests = order === 'the thread first' ? [threadAt(threadTime!), postAt(postTime!)] : [postAt(postTime!), threadAt(threadTime!)];
      const answers = await heldTogether(requests);

      assert.deepEqual(answers.map((a) => a.status).sort(), [201, 400], answers.map((a) => a.text).join('\n'));
      const lost = answers.find((a) => a.status === 400)!;
      assert.match(lost.body.error.message, /within 5 minutes of another scheduled post on this account/);
      const near = (await scheduledOf(x.id)).filter((row) => Math.abs(row.scheduled_at!.getTime() - Date.parse(threadTime!)) < 10 * 60_000);
      assert.ok(near.length === 1 || (near.length === 2 && near.every((row) => row.thread_id !== null && row.thread_id === near[0]!.thread_id)), JSON.stringify(near));
    });
  }
});
