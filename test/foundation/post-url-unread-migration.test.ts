import assert from 'node:assert/strict';
import * as m0210 from '../../migrations/0210_post_url_unread';
import { createUser } from '../../src/users/users';
import { createTestDatabase } from '../helpers/db';

describe('migration 0210_post_url_unread', function () {
  this.timeout(60_000);

  it('takes the published threads and instagram posts without a link as unread (each is asked once more), no other', async () => {
    const { db, pool } = await createTestDatabase();
    const user = await createUser(db, { plan: 'free' });
    await m0210.down(db);
    const { rows } = await pool.query<{ id: string }>(
      `insert into posts (user_id, platform, text, status, platform_post_id, platform_post_url) values
         ($1, 'threads', 'no link', 'published', 't1', null),
         ($1, 'instagram', 'no link', 'published', 'i1', null),
         ($1, 'threads', 'linked', 'published', 't2', 'https://www.threads.com/@h/post/D2'),
         ($1, 'x', 'built link', 'published', 'x1', null),
         ($1, 'threads', 'deleted', 'deleted', 't3', null),
         ($1, 'threads', 'draft', 'draft', null, null)
       returning id`,
      [user.id],
    );
    await m0210.up(db);
    const unread = await pool.query<{ id: string; platform_post_url_unread: boolean }>(`select id, platform_post_url_unread from posts where user_id = $1`, [user.id]);
    const byId = new Map(unread.rows.map((r) => [r.id, r.platform_post_url_unread]));
    assert.deepEqual(rows.map((r) => byId.get(r.id)), [true, true, false, false, false, false]);
  });
});
