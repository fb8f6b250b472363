import assert from 'node:assert/strict';
import { giveBackXCommentReads, takeXCommentReads } from '../../src/comments/allowance';
import { usageMonth } from '../../src/quota/quota';
import { createUser } from '../../src/users/users';
import { createTestDatabase } from '../helpers/db';

/**
 * The x comment-read allowance under two refreshes of one user at once: a take that waited for another refresh's
 * take must report only what it added itself, or the caller gives back more than it took and the month undercounts.
 */
describe('x comment-read allowance, concurrent takes', function () {
  this.timeout(60_000);

  it('a take that waits for another one reports what it granted, and giving back the unused part leaves the count exact', async () => {
    const { db, pool } = await createTestDatabase();
    const user = await createUser(db, { plan: 'starter' });
    const now = new Date();
    assert.equal(await takeXCommentReads(db, user.id, 1_000, 10, now), 10);

    // Another refresh's take of 100 holds the month row's lock while this one asks for 100 as well.
    const other = await pool.connect();
    try {
      // It locks the row first and adds its reads once this take is waiting on the lock (as two takes interleave).
      await other.query('begin');
      await other.query(`select 1 from usage_months where user_id = $1 and month = $2 for update`, [user.id, usageMonth(now)]);
      const waiting = takeXCommentReads(db, user.id, 1_000, 100, now);
      await new Promise((resolve) => setTimeout(resolve, 300));
      await other.query(`update usage_months set x_comment_reads = x_comment_reads + 100 where user_id = $1 and month = $2`, [user.id, usageMonth(now)]);
      await other.query('commit');
      const granted = await waiting;
      assert.equal(granted, 100, 'it added 100; the other take added its own 100');
      await giveBackXCommentReads(db, user.id, granted - 30, now);
    } finally {
      other.release();
    }
    const { rows } = await pool.query(`select x_comment_reads from usage_months where user_id = $1 and month = $2`, [user.id, usageMonth(now)]);
    assert.equal(rows[0].x_comment_reads, 10 + 100 + 30);
  });

  it('a take near the limit grants only what is left, and nothing once the limit is reached', async () => {
    const { db } = await createTestDatabase();
    const user = await createUser(db, { plan: 'starter' });
    const now = new Date();
    assert.equal(await takeXCommentReads(db, user.id, 150, 100, now), 100);
    assert.equal(await takeXCommentReads(db, user.id, 150, 100, now), 50);
    assert.equal(await takeXCommentReads(db, user.id, 150, 100, now), 0);
  });
});
