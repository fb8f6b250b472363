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
 * workflow in the Web UI (or cancels it), and the command, run in another process, asks the running Herald's embedded Temporal and
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

  it('lists scheduled posts whose workflows an operator terminated or cancelled, long before they are overdue', async () => {
    const started = await startHerald(testConfig({ DATABASE_URL: database.url, HERALD_DATA_DIR: dataDir, HOST: '127.0.0.1' }), createLogger('silent'));
    herald = started;
    const user = await createUserWithKey(database.db, 'agent');
    const account = await insertAccount(database.db, user.userId, { platform: 'telegram', platform_account_id: '-100777', username: 'stuck_embedded', credentials: { bot_token: 't' } });
    // Hours apart: scheduled posts of one account keep 5 minutes between them.
    const schedule = async (text: string, hours: number) => {
      const created = await request(started.url, 'POST', '/api/v1/posts', { key: user.apiKey, body: { account_id: account.id, text, schedule_at: new Date(Date.now() + hours * 3_600_000).toISOString() } });
      assert.equal(created.status, 201, created.text);
      return created.body.data.id as string;
    };
    const id = await schedule('terminated in the Web UI', 1);
    const cancelledId = await schedule('cancelled in the Web UI', 2);

    const running = await stuck();
    assert.match(running.temporal, /^127\.0\.0\.1:\d+$/, 'the running Herald\'s embedded Temporal is asked');
    assert.deepEqual(running.stuck.filter((p) => p.id === id), [], 'its workflow runs: not stuck');

    // What the Web UI's Terminate and Cancel do. Neither cancels the post (README "Operator command").
    const connection = await Connection.connect({ address: running.temporal });
    try {
      const client = new Client({ connection });
      await client.workflow.getHandle(postWorkflowId(id)).terminate('an operator in the Web UI');
      const cancelled = client.workflow.getHandle(postWorkflowId(cancelledId));
      await cancelled.cancel();
      for (const deadline = Date.now() + 10_000; (await cancelled.describe()).status.name === 'RUNNING'; await new Promise((r) => setTimeout(r, 100))) {
        assert.ok(Date.now() < deadline, 'the cancelled workflow closes');
      }
    } finally {
      await connection.close();
    }
    const closed = await stuck();
    assert.deepEqual(
      closed.stuck.filter((p) => [id, cancelledId].includes(p.id)).map((p) => [p.id, p.status, p.workflow, p.reason]),
      [id, cancelledId].map((postId) => [postId, 'scheduled', 'closed', 'the post is scheduled but its workflow is closed']),
    );

    // `--older-than` asks for the database's own judgement: not overdue, so not listed.
    const judged = await stuck('--older-than', '0');
    assert.equal(judged.temporal, 'not_configured');
    assert.deepEqual(judged.stuck.filter((p) => [id, cancelledId].includes(p.id)), []);

    // With no Herald running there is no workflow to ask about.
    herald = undefined;
    await started.stop();
    assert.equal((await stuck()).temporal, 'not_configured');
  });
});
