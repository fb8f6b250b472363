import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { createActivities } from '../../activities';
import type { DatabaseHandle } from '../../src/db';
import type { AccountRow } from '../../src/db/tables/accounts';
import { createLogger } from '../../src/logger';
import { postWorkflowId } from '../../src/posts/workflow-client';
import { testConfig } from '../helpers/api';
import { countingDatabase } from '../helpers/counting-database';
import { testDatabase } from '../helpers/db';
import { watchRowWrites } from '../helpers/row-writes';
import { insertXAccount, testSealedBox } from './fixtures';
import { endWaitingWorkflow, startPostsHarness, type PostsHarness } from './harness';

/**
 * Database round trips of one due scheduled post (issue 15: a burst at :00 is bound by the worker's main thread, and
 * the pg client was its largest cost). Every statement of a pool of its own is counted, BEGIN and COMMIT included,
 * so a round trip that comes back fails this test.
 */
const dueScheduledPostStatements = 2;
/** `countingDatabase`'s application_name: the statements of the path under test. */
const COUNTED_POOL = 'herald-test-round-trips';

describe('Scheduled posts: database round trips of a due post (issue 15)', function () {
  this.timeout(120_000);
  let h: PostsHarness;
  let x: AccountRow;
  let counted: DatabaseHandle | undefined;
  const statements: string[] = [];

  before(async function () {
    h = await startPostsHarness();
    x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    counted = countingDatabase((await testDatabase()).url, statements);
  });
  after(async () => {
    await counted?.close();
    await h?.stop();
  });

  it(`claims, sends and records a due scheduled post in ${dueScheduledPostStatements} statements, exactly once`, async () => {
    await h.syncClock();
    // A day ahead: its own workflow waits on its timer while the activity is called here at the instant.
    const at = new Date(h.now().getTime() + 24 * 3600_000);
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'counted round trips', schedule_at: at.toISOString() } });
    assert.equal(res.status, 201, res.text);
    const postId = res.body.data.id as string;
    // Its own workflow ended first, once waiting: its first task, still running, once marked the row meanwhile.
    await endWaitingWorkflow(h, postWorkflowId(postId));
    const activities = createActivities({ config: testConfig(), db: counted!.db, logger: createLogger('silent'), posts: { adapters: h.standIns.adapters, sealedBox: testSealedBox, taskQueue: h.taskQueue } });
    // Connections opened outside the count: the pool's first connects are not the post's round trips.
    await Promise.all([counted!.db.selectNoFrom((eb) => eb.lit(1).as('one')).execute(), counted!.db.selectNoFrom((eb) => eb.lit(1).as('one')).execute()]);
    // Watched for writes from other sessions: one between the claim and the record sends the record to its
    // transaction (5 statements), and the failure then names the writer.
    const watches = [await watchRowWrites(h.db, 'posts', postId), await watchRowWrites(h.db, 'accounts', x.id)];
    statements.length = 0;

    const result = await activities.claimAndPublish({ postId, now: at.getTime(), notBefore: 0 });

    const foreignWrites = (await Promise.all(watches.map((watch) => watch.stop()))).flat().filter((write) => write.application_name !== COUNTED_POOL);
    assert.equal(result.claim?.kind, 'publish');
    assert.equal(result.attempt?.ok && result.attempt.recorded, true, JSON.stringify(result));
    assert.deepEqual(statements.length, dueScheduledPostStatements, `${statements.join('\n')}\nwrites from elsewhere: ${JSON.stringify(foreignWrites)}`);
    const row = await h.db.selectFrom('posts').select(['status', 'publish_attempt_started_at']).where('id', '=', postId).executeTakeFirstOrThrow();
    assert.equal(row.status, 'published');
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === 'counted round trips').length, 1);
    const events = await h.db.selectFrom('events').select('type').where('type', '=', 'post.published').where(sql`data->>'id'`, '=', postId).execute();
    assert.equal(events.length, 1, 'its post.published event, in the same transaction');
    // Called again (a repeated activity): the row is no longer scheduled, nothing is sent twice.
    assert.deepEqual(await activities.claimAndPublish({ postId, now: at.getTime(), notBefore: 0 }), { claim: { kind: 'gone' } });
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === 'counted round trips').length, 1);
  });

  it('the credentials the claim returns are the account as it is: inactive or wiped at the instant, nothing is sent', async () => {
    const activities = createActivities({ config: testConfig(), db: counted!.db, logger: createLogger('silent'), posts: { adapters: h.standIns.adapters, sealedBox: testSealedBox, taskQueue: h.taskQueue } });
    for (const [text, change, reason] of [
      ['due on a lost connection', { active: false, inactive_reason: 'connection_lost' }, 'connection_lost'],
      ['due on a disconnected account (credentials wiped)', { active: false, inactive_reason: 'disconnected', credentials_sealed: null }, 'account_disconnected'],
    ] as const) {
      const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
      await h.syncClock();
      const at = new Date(h.now().getTime() + 24 * 3600_000);
      const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: account.id, text, schedule_at: at.toISOString() } });
      assert.equal(res.status, 201, res.text);
      // Changed behind the API's back (as a renewal refused between the instant and the claim would leave it).
      await h.db.updateTable('accounts').set(change).where('id', '=', account.id).execute();
      const result = await activities.claimAndPublish({ postId: res.body.data.id, now: at.getTime(), notBefore: 0 });
      assert.equal(result.claim?.kind, 'publish', text);
      // A scheduled post is cancelled with its account's reason (2026-12-07: it failed as `account_inactive`).
      assert.deepEqual(result.attempt && !result.attempt.ok && result.attempt.kind, 'not_publishing', text);
      const row = await h.db.selectFrom('posts').select(['status', 'error_message']).where('id', '=', res.body.data.id).executeTakeFirstOrThrow();
      assert.deepEqual(row, { status: 'deleted', error_message: reason }, text);
      assert.equal(h.standIns.x.tweets().filter((t) => t.text === text).length, 0, text);
    }
  });
});
