import assert from 'node:assert/strict';
import * as m0011 from '../../migrations/0011_accounts_disconnect';
import { createUser } from '../../src/users/users';
import { createTestDatabase } from '../helpers/db';

describe('migration 0011_accounts_disconnect', function () {
  this.timeout(60_000);

  it('wipes credentials of disconnected rows, enforces it, and goes down and up again', async () => {
    const database = await createTestDatabase();
    const { db, pool } = database;
    const user = await createUser(db, { plan: 'free' });
    const insert = (values: Record<string, unknown>) =>
      pool.query(
        `insert into accounts (user_id, platform, platform_account_id, username, credentials_sealed, active, inactive_reason)
         values ($1, 'x', $2, 'u', $3, $4, $5) returning id`,
        [user.id, values.platformAccountId, values.sealed, values.active, values.reason],
      );
    await insert({ platformAccountId: '1', sealed: 'v1.a.b.c', active: true, reason: null });
    await insert({ platformAccountId: '2', sealed: null, active: false, reason: 'disconnected' });
    await assert.rejects(insert({ platformAccountId: '3', sealed: null, active: false, reason: 'deactivated' }), /accounts_credentials_wiped_when_disconnected/);
    await assert.rejects(insert({ platformAccountId: '4', sealed: 'v1.a.b.c', active: false, reason: 'disconnected' }), /accounts_credentials_wiped_when_disconnected/);
    await assert.rejects(insert({ platformAccountId: '5', sealed: 'v1.a.b.c', active: false, reason: null }), /accounts_inactive_has_reason/);

    await m0011.down(db);
    const down = await pool.query(`select platform_account_id, credentials_sealed from accounts order by platform_account_id`);
    assert.deepEqual(down.rows, [
      { platform_account_id: '1', credentials_sealed: 'v1.a.b.c' },
      { platform_account_id: '2', credentials_sealed: '' },
    ]);
    await assert.rejects(insert({ platformAccountId: '6', sealed: null, active: true, reason: null }), /null value/);

    await m0011.up(db);
    const up = await pool.query(`select platform_account_id, credentials_sealed from accounts order by platform_account_id`);
    assert.deepEqual(up.rows, [
      { platform_account_id: '1', credentials_sealed: 'v1.a.b.c' },
      { platform_account_id: '2', credentials_sealed: null },
    ]);
  });
});
