import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import * as m0230 from '../../migrations/0230_scheduled_spacing';
import { SCHEDULE_SPACING_MINUTES } from '../../src/platforms/capabilities';
import { requeueAwaitingCredential } from '../../src/posts/attempt-outcomes';
import { againOnSpacingClash } from '../../src/posts/spacing-guard';
import { createUser } from '../../src/users/users';
import { createTestDatabase, type TestDatabase } from '../helpers/db';

const spacing = SCHEDULE_SPACING_MINUTES * 60_000;
const base = Date.parse('2027-03-01T09:00:00Z');
const at = (offsetMs: number) => new Date(base + offsetMs).toISOString();

describe('migration 0230_scheduled_spacing: the spacing rule held by the database', function () {
  this.timeout(60_000);
  let database: TestDatabase;
  let pool: pg.Pool;
  let userId: string;

  before(async () => {
    database = await createTestDatabase();
    pool = database.pool;
    userId = (await createUser(database.db, { plan: 'free' })).id;
  });

  const newAccount = async () =>
    (await pool.query<{ id: string }>(
      `insert into accounts (user_id, platform, platform_account_id, username, credentials_sealed) values ($1, 'x', $2, 'h', 'sealed') returning id`,
      [userId, randomUUID()],
    )).rows[0]!.id;
  const insert = (accountId: string, scheduledAt: string, extra: { status?: string; thread_id?: string; thread_order?: number; retry_count?: number; next_attempt_at?: string } = {}) =>
    pool.query(
      `insert into posts (user_id, account_id, platform, text, status, scheduled_at, thread_id, thread_order, retry_count, next_attempt_at)
       values ($1, $2, 'x', 'spacing', $3, $4, $5, $6, $7, $8)`,
      [userId, accountId, extra.status ?? 'scheduled', scheduledAt, extra.thread_id ?? null, extra.thread_id ? (extra.thread_order ?? 1) : null, extra.retry_count ?? 0, extra.next_attempt_at ?? null],
    );
  const clash = /posts_scheduled_spacing/;

  it(`refuses a second waiting post less than ${SCHEDULE_SPACING_MINUTES} minutes from another of the account (either side), takes exactly ${SCHEDULE_SPACING_MINUTES}`, async () => {
    const account = await newAccount();
    await insert(account, at(0));
    await assert.rejects(insert(account, at(spacing - 1)), clash);
    await assert.rejects(insert(account, at(-(spacing - 1))), clash);
    await assert.rejects(insert(account, at(0)), clash);
    await insert(account, at(spacing));
    await insert(account, at(-spacing));
  });

  it('leaves other accounts, the parts of one thread, drafts and posts past their first attempt out of it', async () => {
    const account = await newAccount();
    await insert(account, at(0));
    await insert(await newAccount(), at(0));
    const threadId = randomUUID();
    const other = await newAccount();
    await insert(other, at(0), { thread_id: threadId, thread_order: 1 });
    await insert(other, at(0), { thread_id: threadId, thread_order: 2 });
    await insert(other, at(0), { thread_id: threadId, thread_order: 3 });
    await assert.rejects(insert(other, at(60_000), { thread_id: randomUUID() }), clash, 'another thread clashes by its first part');
    await assert.rejects(insert(other, at(60_000)), clash, 'a post clashes with a thread');
    // Back to `scheduled` after a failed attempt or to wait for a renewal: a workflow's write, never refused.
    await insert(account, at(60_000), { retry_count: 1 });
    await insert(account, at(60_000), { next_attempt_at: at(120_000) });
    for (const status of ['draft', 'publishing', 'published', 'failed', 'deleted']) await insert(account, at(60_000), { status });
    // A post moved back to waiting as if new again (a reschedule ends a wait) is held to it.
    const { rows } = await pool.query<{ id: string }>(`select id from posts where account_id = $1 and next_attempt_at is not null`, [account]);
    await assert.rejects(pool.query(`update posts set next_attempt_at = null where id = $1`, [rows[0]!.id]), clash);
  });

  it('a post claimed at its time goes back to waiting for a renewal though a post was scheduled next to it meanwhile', async () => {
    const account = await newAccount();
    const { rows } = await pool.query<{ id: string }>(
      `insert into posts (user_id, account_id, platform, text, status, scheduled_at) values ($1, $2, 'x', 'claimed', 'publishing', $3), ($1, $2, 'x', 'claimed', 'publishing', $4) returning id`,
      [userId, account, at(0), at(-spacing - 60_000)],
    );
    await insert(account, at(60_000));
    await insert(account, at(-spacing));
    await requeueAwaitingCredential(database.db, rows[0]!.id, { retryAt: base + 120_000 });
    // A run older than `next_attempt_at` gives no time.
    await requeueAwaitingCredential(database.db, rows[1]!.id);
    const statuses = await pool.query<{ status: string }>(`select status from posts where id = any($1)`, [rows.map((r) => r.id)]);
    assert.deepEqual(statuses.rows.map((r) => r.status), ['scheduled', 'scheduled']);
  });

  it('the service judges a clash (or a deadlock) again from its read, and after three gives the rule\'s sentence', async () => {
    let calls = 0;
    const clashing = Object.assign(new Error('conflicting key value violates exclusion constraint'), { code: '23P01', constraint: 'posts_scheduled_spacing' });
    const deadlock = Object.assign(new Error('deadlock detected'), { code: '40P01' });
    assert.equal(await againOnSpacingClash(async () => (++calls === 1 ? Promise.reject(deadlock) : calls)), 2);
    calls = 0;
    await assert.rejects(
      againOnSpacingClash(async () => {
        calls++;
        throw clashing;
      }),
      (err: { code?: string; message?: string }) => err.code === 'bad_request' && /at least 5 minutes apart/.test(err.message ?? ''),
    );
    assert.equal(calls, 3);
    const other = Object.assign(new Error('other exclusion'), { code: '23P01', constraint: 'another' });
    await assert.rejects(againOnSpacingClash(async () => Promise.reject(other)), /other exclusion/);
  });

  it('refuses to start over two waiting posts already too close, naming them; down and up again otherwise', async () => {
    const fresh = await createTestDatabase();
    const user = await createUser(fresh.db, { plan: 'free' });
    const account = (await fresh.pool.query<{ id: string }>(
      `insert into accounts (user_id, platform, platform_account_id, username, credentials_sealed) values ($1, 'x', 'p', 'h', 'sealed') returning id`,
      [user.id],
    )).rows[0]!.id;
    await m0230.down(fresh.db);
    const values = `($1, $2, 'x', 'close', 'scheduled', $3)`;
    await fresh.pool.query(`insert into posts (user_id, account_id, platform, text, status, scheduled_at) values ${values}, ($1, $2, 'x', 'close', 'scheduled', $4)`, [user.id, account, at(0), at(60_000)]);
    await assert.rejects(m0230.up(fresh.db), /Migration 0230: two scheduled posts of one account are less than 5 minutes apart \(Key .*conflicts with key/);
    await fresh.pool.query(`update posts set scheduled_at = $1 where scheduled_at = $2`, [at(spacing), at(60_000)]);
    await m0230.up(fresh.db);
  });
});
