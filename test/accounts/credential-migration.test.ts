import assert from 'node:assert/strict';
import * as m0075 from '../../migrations/0075_account_credential_lifetime';
import { createUser } from '../../src/users/users';
import { createTestDatabase } from '../helpers/db';

describe('migration 0075_account_credential_lifetime', function () {
  this.timeout(60_000);

  it('gives accounts connected before it the latest end of their tokens (age unknown), and goes down and up again', async () => {
    const { db, pool } = await createTestDatabase();
    await m0075.down(db);
    const user = await createUser(db, { plan: 'pro' });
    const rows: Array<[string, string, boolean, string | null, string | null]> = [
      ['x-oauth2', 'x', false, null, 'v1.a.b.c'],
      ['x-own-keys', 'x', true, null, 'v1.a.b.c'],
      ['threads', 'threads', false, null, 'v1.a.b.c'],
      ['linkedin', 'linkedin', false, null, 'v1.a.b.c'],
      ['ig-login', 'instagram', false, 'instagram', 'v1.a.b.c'],
      ['ig-facebook', 'instagram', false, 'facebook', 'v1.a.b.c'],
      ['facebook', 'facebook', false, null, 'v1.a.b.c'],
      ['x-disconnected', 'x', false, null, null],
    ];
    for (const [id, platform, own, via, sealed] of rows) {
      await pool.query(
        `insert into accounts (user_id, platform, platform_account_id, username, own_credentials, via, credentials_sealed, active, inactive_reason)
         values ($1, $2, $3, 'u', $4, $5, $6, $7, $8)`,
        [user.id, platform, id, own, via, sealed, sealed !== null, sealed === null ? 'disconnected' : null],
      );
    }
    await m0075.up(db);
    const after = await pool.query(
      `select platform_account_id as id, round(extract(epoch from credential_expires_at - now()) / 3600) as hours, credential_issued_at
       from accounts where user_id = $1 order by platform_account_id`,
      [user.id],
    );
    assert.deepEqual(
      after.rows.map((r) => [r.id, r.hours === null ? null : Number(r.hours), r.credential_issued_at]),
      [
        ['facebook', null, null],
        ['ig-facebook', null, null],
        ['ig-login', 1440, null],
        ['linkedin', 1440, null],
        ['threads', 1440, null],
        ['x-disconnected', null, null],
        ['x-oauth2', 2, null],
        ['x-own-keys', null, null],
      ],
    );
  });
});
