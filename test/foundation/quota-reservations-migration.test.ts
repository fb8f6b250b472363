import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import * as m0180 from '../../migrations/0180_quota_reservations_compact';
import { createUser } from '../../src/users/users';
import { createTestDatabase } from '../helpers/db';

describe('migration 0180_quota_reservations_compact', function () {
  this.timeout(60_000);

  it('keeps every reservation as it was, down and up again, without the uuid key; its rules and index stay', async () => {
    const database = await createTestDatabase();
    const { db, pool } = database;
    const user = await createUser(db, { plan: 'free' });
    const [scheduled, published] = [randomUUID(), randomUUID()];
    await pool.query(
      `insert into quota_reservations (user_id, post_id, month, kind, state, overage, created_at, updated_at) values
         ($1, $2, '2026-12', 'post', 'reserved', false, '2026-12-01T09:00:00Z', '2026-12-01T09:00:00Z'),
         ($1, $2, '2026-12', 'scheduled', 'reserved', false, '2026-12-01T09:00:00Z', '2026-12-01T09:00:00Z'),
         ($1, $3, '2026-11', 'post', 'spent', true, '2026-11-30T23:59:00Z', '2026-12-01T00:01:00Z')`,
      [user.id, scheduled, published],
    );
    const rows = () =>
      pool.query(`select user_id, post_id, month, kind, state, overage, created_at, updated_at from quota_reservations order by created_at, kind`);
    const before = (await rows()).rows;
    assert.equal(before.length, 3);
    const columns = async () =>
      (await pool.query(`select column_name from information_schema.columns where table_name = 'quota_reservations' order by column_name`)).rows.map((r) => r.column_name);

    await m0180.down(db);
    assert.deepEqual((await rows()).rows, before);
    assert.ok((await columns()).includes('id'));

    await m0180.up(db);
    assert.deepEqual((await rows()).rows, before);
    assert.deepEqual(await columns(), ['created_at', 'kind', 'month', 'overage', 'post_id', 'state', 'updated_at', 'user_id']);
    const insert = (kind: string, state: string) =>
      pool.query(`insert into quota_reservations (user_id, post_id, month, kind, state) values ($1, $2, '2026-12', $3, $4)`, [user.id, randomUUID(), kind, state]);
    await assert.rejects(insert('reply', 'reserved'), /quota_reservations_kind_check/);
    await assert.rejects(insert('post', 'held'), /quota_reservations_state_check/);
    const indexes = await pool.query(`select indexdef from pg_indexes where tablename = 'quota_reservations'`);
    assert.deepEqual(indexes.rows.map((r) => r.indexdef), ['CREATE INDEX quota_reservations_post_idx ON public.quota_reservations USING btree (post_id)']);
    await pool.query(`delete from users where id = $1`, [user.id]);
    assert.equal((await rows()).rows.length, 0, 'a user deleted takes their reservations along');
  });
});
