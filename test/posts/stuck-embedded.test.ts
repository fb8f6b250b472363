import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { createLogger } from '../../src/logger';
import { startHerald, type RunningHerald } from '../../src/main';
import { postWorkflowId } from '../../src/posts/workflow-client';
import { createUserWithKey, request, testConfig, testEncryptionKey } from '../helpers/api';
import { runCli } from '../helpers/cli';
import { createTestDatabase, type TestDatabase } from '../helpers/db';
import { silenceSdkLogs } from '../helpers/temporal';
import { insertAccount } from './fixtures';

/**
 * `herald posts stuck` beside a plain `npm start` (no TEMPORAL_ADDRESS): the operator terminates a scheduled post's
 * workflow in the Web UI, and the command, run in another process, asks the running Herald's embedded Temporal and
 * lists the post, its workflow `closed`, an hour before the database alone would show anything.
 */
describe('herald posts stuck asks the embedded Temporal of the Herald that runs on the database', function () {
  this.timeout(90_000);
  let database: TestDatabase;
  let dataDir: string;
  let herald: RunningHerald | undefined;

  before(async () => {
    silenceSdkLogs();
    // A database of its own: the one-Herald lock and its holder are per database.
    database = await createTestDatabase();
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'herald-stuck-embedded-'));
  });
  after(async () => {
    await herald?.stop();
    await database?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  const stuck = async (...args: string[]) => {
    const cli = await runCli(['posts', 'stuck', ...args], { DATABASE_URL: database.url, HERALD_DATA_DIR: dataDir, HERALD_ENCRYPTION_KEY: testEncryptionKey, TEMPORAL_ADDRESS: '' });
    assert.equal(cli.code, 0, cli.stdout);
    return JSON.parse(cli.stdout) as { temporal: string; stuck: Array<{ id: string; status: string; workflow: string; reason: string }> };
  };

  it('lists a scheduled post whose workflow an operator terminated, long before it is overdue', async () => {
    herald = await startHerald(testConfig({ DATABASE_URL: database.url, HERALD_DATA_DIR: dataDir, HOST: '127.0.0.1' }), createLogger('silent'));
    const user = await createUserWithKey(database.db, 'agent');
    const account = await insertAccount(database.db, user.userId, { platform: 'telegram', platform_account_id: '-100777', username: 'stuck_embedded', credentials: { bot_token: 't' } });
    const created = await request(herald.url, 'POST', '/api/v1/posts', {
      key: user.apiKey,
      body: { account_id: account.id, text: 'terminated in the Web UI', schedule_at: new Date(Date.now() + 3_600_000).toISOString() },
    });
    assert.equal(created.status, 201, created.text);
    const id = created.body.data.id as string;

    const running = await stuck();
    assert.match(running.temporal, /^127\.0\.0\.1:\d+$/, 'the running Herald\'s embedded Temporal is asked');
    assert.deepEqual(running.stuck.filter((p) => p.id === id), [], 'its workflow runs: not stuck');

    // What the Web UI's Terminate does.
    const connection = await Connection.connect({ address: running.temporal });
    try {
      await new Client({ connection }).workflow.getHandle(postWorkflowId(id)).terminate('an operator in the Web UI');
    } finally {
      await connection.close();
    }
    const terminated = await stuck();
    assert.deepEqual(
      terminated.stuck.filter((p) => p.id === id).map((p) => [p.status, p.workflow, p.reason]),
      [['scheduled', 'closed', 'the post is scheduled but its workflow is closed']],
    );

    // `--older-than` asks for the database's own judgement: not overdue, so not listed.
    const judged = await stuck('--older-than', '0');
    assert.equal(judged.temporal, 'not_configured');
    assert.deepEqual(judged.stuck.filter((p) => p.id === id), []);

    // With no Herald running there is no workflow to ask about.
    await herald.stop();
    herald = undefined;
    assert.equal((await stuck()).temporal, 'not_configured');
  });
});
