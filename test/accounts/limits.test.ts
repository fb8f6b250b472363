import assert from 'node:assert/strict';
import { markConnectionLost } from '../../src/accounts';
import type { PlanName } from '../../src/plans';
import { setPlan } from '../../src/users/users';
import { type TestApi, request, startApi } from '../helpers/api';
import { testDatabase } from '../helpers/db';
import { type PlatformStandIns, startPlatformStandIns } from '../helpers/platform-standins';

/** The plan's account limit (decisions.md "Plans"), taken race-free, and what holds a slot. */
describe('accounts: plan limit', function () {
  this.timeout(60_000);
  let platforms: PlatformStandIns;
  let api: TestApi;
  let tokens = 0;

  before(async () => {
    platforms = await startPlatformStandIns();
    api = await startApi({ deps: { adapters: platforms.adapters } });
  });
  after(async () => {
    await api?.close();
    await platforms?.stop();
  });

  /** A fresh X account on the stand-in; returns the token that connects it. */
  function xAccount(): string {
    const token = `x-limit-${++tokens}`;
    platforms.x.addUser({ username: `limit${tokens}`, bearerToken: token });
    return token;
  }

  async function userWithPlan(plan: PlanName, accountLimit?: number) {
    const user = await api.newUser(plan);
    if (accountLimit !== undefined) await setPlan((await testDatabase()).db, user.userId, plan, { account_limit: accountLimit });
    return {
      ...user,
      connect: (token: string) => request(api.url, 'POST', '/api/v1/accounts', { key: user.apiKey, body: { access_token: token } }),
      call: (method: string, path: string, body?: unknown) => request(api.url, method, path, { key: user.apiKey, body }),
    };
  }

  async function rowCount(userId: string): Promise<number> {
    const { db } = await testDatabase();
    const rows = await db.selectFrom('accounts').select('id').where('user_id', '=', userId).execute();
    return rows.length;
  }

  const limitError = (plan: string, limit: number, inUse: number) => ({
    error: {
      code: 'account_limit_reached',
      message: `The ${plan} plan allows ${limit} connected account${limit === 1 ? '' : 's'} and ${inUse} ${inUse === 1 ? 'is' : 'are'} in use; deactivate or disconnect one, or change plans.`,
    },
  });

  it('free: three accounts, the fourth is 429 account_limit_reached with no Retry-After and no row; reconnecting needs no slot', async () => {
    const user = await userWithPlan('free');
    const held = [xAccount(), xAccount(), xAccount()];
    const ids: string[] = [];
    for (const token of held) {
      const res = await user.connect(token);
      assert.equal(res.status, 201);
      ids.push(res.body.data.id);
    }
    const fourth = await user.connect(xAccount());
    assert.equal(fourth.status, 429);
    assert.deepEqual(fourth.body, limitError('free', 3, 3));
    assert.equal(fourth.headers.get('retry-after'), null);
    assert.equal(await rowCount(user.userId), 3);

    const again = await user.connect(held[1]);
    assert.equal(again.status, 200);
    assert.equal(again.body.data.id, ids[1]);
    assert.equal(await rowCount(user.userId), 3);
  });

  it('concurrent connects never exceed the limit', async () => {
    const user = await userWithPlan('free');
    // Hold back every write to accounts until all eight requests are inside the database, so that a check-then-insert
    // without the user lock would let all of them through.
    const { pool } = await testDatabase();
    const blocker = await pool.connect();
    let results;
    try {
      await blocker.query('begin');
      await blocker.query('lock table accounts in exclusive mode');
      const pending = Promise.all(Array.from({ length: 8 }, () => xAccount()).map((token) => user.connect(token)));
      const deadline = Date.now() + 15_000;
      for (;;) {
        const waiting = await pool.query(
          "select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'",
        );
        if (waiting.rows[0].n >= 8) break;
        if (Date.now() > deadline) throw new Error(`only ${waiting.rows[0].n} connects reached the database`);
        await new Promise((r) => setTimeout(r, 20));
      }
      await blocker.query('commit');
      results = await pending;
    } finally {
      await blocker.query('rollback').catch(() => undefined);
      blocker.release();
    }
    const statuses = results.map((r) => r.status).sort();
    assert.deepEqual(statuses, [201, 201, 201, 429, 429, 429, 429, 429]);
    for (const r of results.filter((r) => r.status === 429)) assert.deepEqual(r.body, limitError('free', 3, 3));
    assert.equal(await rowCount(user.userId), 3);
  });

  it('concurrent connects of the same platform account make one row (201 then 200)', async () => {
    const user = await userWithPlan('free');
    const token = xAccount();
    const results = await Promise.all([user.connect(token), user.connect(token), user.connect(token)]);
    assert.deepEqual(results.map((r) => r.status).sort(), [200, 200, 201]);
    assert.equal(new Set(results.map((r) => r.body.data.id)).size, 1);
    assert.equal(await rowCount(user.userId), 1);
  });

  it('deactivating or disconnecting frees the slot; switching back on or reconnecting then needs one', async () => {
    const user = await userWithPlan('free');
    const tokensHeld = [xAccount(), xAccount(), xAccount()];
    const ids: string[] = [];
    for (const token of tokensHeld) ids.push((await user.connect(token)).body.data.id);

    assert.equal((await user.call('PATCH', `/api/v1/accounts/${ids[0]}`, { active: false })).status, 200);
    const fourth = await user.connect(xAccount());
    assert.equal(fourth.status, 201);

    const reactivate = await user.call('PATCH', `/api/v1/accounts/${ids[0]}`, { active: true });
    assert.equal(reactivate.status, 429);
    assert.deepEqual(reactivate.body, limitError('free', 3, 3));
    const reconnectDeactivated = await user.connect(tokensHeld[0]);
    assert.deepEqual(reconnectDeactivated.body, limitError('free', 3, 3));

    assert.equal((await user.call('DELETE', `/api/v1/accounts/${ids[1]}`)).status, 200);
    assert.equal((await user.connect(xAccount())).status, 201);
    const reconnectDisconnected = await user.connect(tokensHeld[1]);
    assert.deepEqual(reconnectDisconnected.body, limitError('free', 3, 3));

    assert.equal((await user.call('DELETE', `/api/v1/accounts/${fourth.body.data.id}`)).status, 200);
    const back = await user.call('PATCH', `/api/v1/accounts/${ids[0]}`, { active: true });
    assert.equal(back.status, 200);
    assert.equal(back.body.data.active, true);
    assert.equal(back.body.data.inactive_reason, null);
  });

  it('a reconnect of a disconnected account within the limit restores it under the same id', async () => {
    const user = await userWithPlan('free');
    const token = xAccount();
    const first = await user.connect(token);
    await user.call('DELETE', `/api/v1/accounts/${first.body.data.id}`);
    const again = await user.connect(token);
    assert.equal(again.status, 200);
    assert.equal(again.body.data.id, first.body.data.id);
    assert.equal(again.body.data.active, true);
    assert.equal(again.body.data.inactive_reason, null);
    assert.equal((await user.call('GET', `/api/v1/accounts/${first.body.data.id}`)).status, 200);
  });

  it('an account whose connection was lost keeps its slot, and reconnecting it needs no free one', async () => {
    const user = await userWithPlan('free');
    const tokensHeld = [xAccount(), xAccount(), xAccount()];
    const ids: string[] = [];
    for (const token of tokensHeld) ids.push((await user.connect(token)).body.data.id);
    assert.equal(await markConnectionLost((await testDatabase()).db, ids[2]), true);

    const extra = await user.connect(xAccount());
    assert.deepEqual(extra.body, limitError('free', 3, 3));
    const reconnect = await user.connect(tokensHeld[2]);
    assert.equal(reconnect.status, 200);
    assert.equal(reconnect.body.data.id, ids[2]);
    assert.equal(reconnect.body.data.active, true);
    assert.equal(reconnect.body.data.inactive_reason, null);
  });

  it('scale uses the custom limit from the user row; unset means none', async () => {
    const scale = await userWithPlan('scale', 1);
    assert.equal((await scale.connect(xAccount())).status, 201);
    assert.deepEqual((await scale.connect(xAccount())).body, limitError('scale', 1, 1));

    const unset = await userWithPlan('scale');
    assert.deepEqual((await unset.connect(xAccount())).body, limitError('scale', 0, 0));
  });

  it('enterprise is unlimited', async () => {
    const user = await userWithPlan('enterprise');
    for (let i = 0; i < 5; i += 1) assert.equal((await user.connect(xAccount())).status, 201);
    assert.equal(await rowCount(user.userId), 5);
  });
});
