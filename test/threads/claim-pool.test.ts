import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createThreadActivities } from '../../activities/threads';
import { openDatabase, type DatabaseHandle } from '../../src/db';
import { createLogger } from '../../src/logger';
import { createPostsRuntime } from '../../src/posts/runtime';
import { createUser } from '../../src/users/users';
import { testConfig } from '../helpers/api';
import { testDatabase } from '../helpers/db';
import { insertAccount, testSealedBox } from '../posts/fixtures';

/**
 * More threads due at once than the worker's pool has connections: each claim holds a connection for its
 * transaction, and nothing in it may wait for a second one (20 scheduled threads at one instant once froze the
 * worker's pool of 20 for good: every claim held a connection and waited for another to read the account).
 */
describe('claimThread: threads due together never wait on the pool they hold', function () {
  this.timeout(60_000);
  let small: DatabaseHandle;

  before(async () => {
    small = openDatabase((await testDatabase()).url, { max: 2, applicationName: 'herald-test-small-pool' });
  });
  after(async () => small?.close());

  it('claims four due threads at once over a pool of two connections', async () => {
    const { db } = await testDatabase();
    const user = await createUser(db, { plan: 'pro' });
    const threadIds: string[] = [];
    for (let i = 0; i < 4; i++) {
      const account = await insertAccount(db, user.id, { platform: 'x', platform_account_id: `pool-${randomUUID()}`, username: `pool${i}`, credentials: { access_token: 't' } });
      const threadId = randomUUID();
      await db
        .insertInto('posts')
        .values([1, 2].map((n) => ({ user_id: user.id, account_id: account.id, platform: 'x' as const, text: `pool ${i} ${n}`, status: 'scheduled' as const, scheduled_at: new Date(Date.now() - 1_000), thread_id: threadId, thread_order: n })))
        .execute();
      threadIds.push(threadId);
    }
    const rt = createPostsRuntime({ config: testConfig(), db: small.db, logger: createLogger('silent') }, { sealedBox: testSealedBox });
    const { claimThread } = createThreadActivities(rt);
    let timer: NodeJS.Timeout | undefined;
    const stuck = new Promise<never>((_, fail) => (timer = setTimeout(() => fail(new Error('the claims waited 10 s on the pool they hold')), 10_000)));
    try {
      const claims = await Promise.race([Promise.all(threadIds.map((threadId) => claimThread({ threadId, now: Date.now(), notBefore: 0 }))), stuck]);
      assert.deepEqual(claims.map((c) => c.kind), ['publish', 'publish', 'publish', 'publish']);
    } finally {
      clearTimeout(timer);
    }
    const statuses = await db.selectFrom('posts').select('status').where('thread_id', 'in', threadIds).execute();
    assert.deepEqual([...new Set(statuses.map((r) => r.status))], ['publishing']);
  });
});
