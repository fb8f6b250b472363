import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '../../src/logger';
import { startHerald, type RunningHerald } from '../../src/main';
import { findStuckPosts } from '../../src/posts/reconcile';
import { createUserWithKey, request, testConfig, testEncryptionKey } from '../helpers/api';
import { runCli } from '../helpers/cli';
import { testDatabase, type TestDatabase } from '../helpers/db';
import { silenceSdkLogs } from '../helpers/temporal';
import { startXStandIn, type XStandIn } from '../standins/x';
import { insertXAccount } from './fixtures';

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
