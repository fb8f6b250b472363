import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '../../src/logger';
import { startHerald, type RunningHerald } from '../../src/main';
import { reconcilePosts } from '../../src/posts/reconcile';
import { findStuckPosts } from '../../src/posts/stuck';
import { postWorkflowId } from '../../src/posts/workflow-client';
import { createUserWithKey, request, testConfig, testEncryptionKey } from '../helpers/api';
import { runCli } from '../helpers/cli';
import { testDatabase, type TestDatabase } from '../helpers/db';
import { silenceSdkLogs } from '../helpers/temporal';
import { startXStandIn, type XStandIn } from '../standins/x';
import { insertXAccount } from './fixtures';
import { startPostsHarness, type PostsHarness } from './harness';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('Scheduled posts survive a restart of the service (embedded, memory-only Temporal)', function () {
  this.timeout(90_000);
  let database: TestDatabase;
  let x: XStandIn;
  let dataDir: string;
  let herald: RunningHerald | undefined;

  before(async () => {
    silenceSdkLogs();
    database = await testDatabase();
    x = await startXStandIn();
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'herald-restart-'));
  });
  after(async () => {
    await herald?.stop();
    await x?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  const start = () =>
    startHerald(
      testConfig({ DATABASE_URL: database.url, HERALD_X_API_URL: x.origin, HERALD_DATA_DIR: dataDir, HOST: '127.0.0.1' }),
      createLogger('silent'),
    );

  it('a post scheduled before a stop publishes exactly once after the next start', async () => {
    const user = await createUserWithKey(database.db, 'agent');
    const account = await insertXAccount(database.db, user.userId, x);
    herald = await start();
    const at = new Date(Date.now() + 4_000);
    const created = await request(herald.url, 'POST', '/api/v1/posts', { key: user.apiKey, body: { account_id: account.id, text: 'across a restart', schedule_at: at.toISOString() } });
    assert.equal(created.status, 201, created.text);
    const id = created.body.data.id;
    await herald.stop();
    herald = undefined;

    await sleep(Math.max(0, at.getTime() - Date.now()) + 500);
    const stuck = await findStuckPosts(database.db, null, new Date(Date.now() + 10 * 60_000));
    assert.deepEqual(
      stuck.filter((p) => p.id === id).map((p) => [p.status, p.workflow, p.reason]),
      [['scheduled', 'unknown', 'scheduled time passed without an attempt']],
      'while the service is down the post is overdue',
    );
    assert.equal(x.tweets().filter((t) => t.text === 'across a restart').length, 0);
    const cli = await runCli(['posts', 'stuck', '--older-than', '0'], { DATABASE_URL: database.url, HERALD_DATA_DIR: dataDir, HERALD_ENCRYPTION_KEY: testEncryptionKey, TEMPORAL_ADDRESS: '' });
    assert.equal(cli.code, 0, cli.stdout);
    const listed = JSON.parse(cli.stdout) as { temporal: string; stuck: Array<{ id: string; status: string; workflow: string }> };
    assert.equal(listed.temporal, 'not_configured');
    assert.deepEqual(
      listed.stuck.filter((p) => p.id === id).map((p) => [p.status, p.workflow]),
      [['scheduled', 'unknown']],
      'herald posts stuck shows it too',
    );

    herald = await start();
    let post: { status: string } | undefined;
    for (let i = 0; i < 100; i++) {
      post = (await request(herald.url, 'GET', `/api/v1/posts/${id}`, { key: user.apiKey })).body.data;
      if (post?.status === 'published') break;
      await sleep(200);
    }
    assert.equal(post?.status, 'published');
    assert.equal(x.tweets().filter((t) => t.text === 'across a restart').length, 1);
    await herald.stop();
    herald = await start();
    await sleep(1_000);
    assert.equal(x.tweets().filter((t) => t.text === 'across a restart').length, 1, 'a third start publishes nothing again');
  });
});

describe('A post waiting for a retry keeps its wait and its count when its workflow is lost', function () {
  this.timeout(120_000);
  let h: PostsHarness;

  before(async () => {
    h = await startPostsHarness();
  });
  after(async () => h?.stop());
  afterEach(() => h.standIns.x.standIn.clearFaults());

  const serviceUnavailable = {
    kind: 'reply' as const,
    response: { status: 503, headers: { 'content-type': 'application/json' }, json: { title: 'Service Unavailable', detail: 'Service Unavailable', type: 'about:blank', status: 503 } },
  };
  const retryCount = async (id: string) => (await h.db.selectFrom('posts').select('retry_count').where('id', '=', id).executeTakeFirstOrThrow()).retry_count;

  it('restarted by the reconciler, it is not sent before its retry is due, and fails for good after its third retry', async () => {
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    await h.syncClock();
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: account.id, text: 'retried across a restart', schedule_at: new Date(h.now().getTime() + 10 * 60_000).toISOString() } });
    assert.equal(res.status, 201, res.text);
    const id: string = res.body.data.id;
    h.standIns.x.standIn.inject({ method: 'POST', path: '/2/tweets' }, serviceUnavailable, 100);
    // Attempts at 10 min and, after the first retry's minute, 11 min: failed twice, the next due 5 minutes later (16).
    await h.env.sleep(11.5 * 60_000);
    assert.equal(await retryCount(id), 2);

    // The embedded Temporal forgets every run at a restart; the reconciler starts the post's workflow again.
    await h.env.client.workflow.getHandle(postWorkflowId(id)).terminate('lost, as after a restart of the embedded server');
    const reconciled = await reconcilePosts(h.reconcilerRuntime(), { changedWithinMs: 5 * 60_000 });
    assert.ok(reconciled.started.includes(postWorkflowId(id)));

    await h.env.sleep('4 minutes');
    assert.equal(await retryCount(id), 2, 'nothing sent before the retry is due (16 min)');
    await h.env.sleep('1 minute');
    assert.equal(await retryCount(id), 3, 'the third attempt once it was due');

    assert.deepEqual(await h.settle(id), { outcome: 'failed' });
    const failed = await h.db.selectFrom('posts').select(['status', 'retry_count']).where('id', '=', id).executeTakeFirstOrThrow();
    assert.deepEqual(failed, { status: 'failed', retry_count: 4 }, 'the first attempt and three retries, counted across the restart');
  });
});
