import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startServer } from '../../temporal-dev';
import { ConfigError, parseConfig } from '../../src/config';
import { createUserWithKey, testEncryptionKey } from '../helpers/api';
import { runCli } from '../helpers/cli';
import { testDatabase, type TestDatabase } from '../helpers/db';
import { insertAccount } from './fixtures';

/**
 * `herald posts stuck` against an external Temporal cluster (`TEMPORAL_ADDRESS`): with `TEMPORAL_WEB_UI_URL` set,
 * the cluster's Web UI and, per stuck post, the UI filtered to its PostId, as the embedded server's UI is linked.
 */
describe('herald posts stuck: Web UI links of an external Temporal cluster', function () {
  this.timeout(60_000);
  let database: TestDatabase;
  let temporal: Awaited<ReturnType<typeof startServer>>;
  let dataDir: string;
  let postId: string;
  let part: { id: string; threadId: string };

  before(async () => {
    database = await testDatabase();
    temporal = await startServer({ port: 0 });
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'herald-stuck-links-'));
    const user = await createUserWithKey(database.db, 'agent');
    const account = await insertAccount(database.db, user.userId, { platform: 'telegram', platform_account_id: '-100123', username: 'stuck_channel', credentials: { bot_token: 't' } });
    // Scheduled, and no workflow on the cluster: stuck, its workflow `missing`.
    const row = await database.db
      .insertInto('posts')
      .values({ user_id: user.userId, account_id: account.id, platform: 'telegram', text: 'no workflow anywhere', status: 'scheduled', scheduled_at: new Date(Date.now() + 3_600_000) })
      .returning('id')
      .executeTakeFirstOrThrow();
    postId = row.id;
    // A thread part: its workflow is found by ThreadId (a long thread's PostId lists only its first parts).
    const threadId = randomUUID();
    const partRow = await database.db
      .insertInto('posts')
      .values({ user_id: user.userId, account_id: account.id, platform: 'telegram', text: 'a part with no workflow', status: 'scheduled', scheduled_at: new Date(Date.now() + 2 * 3_600_000), thread_id: threadId, thread_order: 1 })
      .returning('id')
      .executeTakeFirstOrThrow();
    part = { id: partRow.id, threadId };
  });
  after(async () => {
    await database.db.deleteFrom('posts').where('id', 'in', [postId, part?.id].filter((id): id is string => id !== undefined)).execute();
    await temporal?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  const stuck = async (webUiUrl: string) => {
    const cli = await runCli(['posts', 'stuck'], {
      DATABASE_URL: database.url, HERALD_DATA_DIR: dataDir, HERALD_ENCRYPTION_KEY: testEncryptionKey, TEMPORAL_ADDRESS: temporal.address, TEMPORAL_WEB_UI_URL: webUiUrl,
    });
    assert.equal(cli.code, 0, cli.stdout);
    return JSON.parse(cli.stdout) as { temporal: string; web_ui?: string; stuck: Array<{ id: string; thread_id: string | null; workflow: string; web_ui?: string }> };
  };

  it('links the cluster UI and each stuck post, filtered to its PostId', async () => {
    const listed = await stuck('https://temporal.example.com/ui/');
    assert.equal(listed.temporal, temporal.address);
    assert.equal(listed.web_ui, 'https://temporal.example.com/ui');
    assert.deepEqual(
      listed.stuck.filter((p) => p.id === postId).map((p) => [p.workflow, p.web_ui]),
      [['missing', `https://temporal.example.com/ui/namespaces/default/workflows?query=PostId%20%3D%20'${postId}'`]],
    );
    assert.deepEqual(
      listed.stuck.filter((p) => p.id === part.id).map((p) => [p.thread_id, p.web_ui]),
      [[part.threadId, `https://temporal.example.com/ui/namespaces/default/workflows?query=ThreadId%20%3D%20'${part.threadId}'`]],
    );
    // A thread part's link filters on its thread (a long thread's PostId lists only its first parts).
    assert.ok(listed.stuck.every((p) => p.web_ui?.endsWith(`'${p.thread_id ?? p.id}'`)), 'every stuck post carries its link');
  });

  it('without TEMPORAL_WEB_UI_URL, no links (there is no embedded UI to ask)', async () => {
    const listed = await stuck('');
    assert.equal(listed.web_ui, undefined);
    assert.deepEqual(listed.stuck.filter((p) => p.id === postId).map((p) => [p.workflow, p.web_ui]), [['missing', undefined]]);
  });

  it('a TEMPORAL_WEB_UI_URL that is not an http(s) URL stops with a message naming it', () => {
    assert.throws(() => parseConfig({ TEMPORAL_WEB_UI_URL: 'temporal.example.com:8080' }), (err: Error) => err instanceof ConfigError && /TEMPORAL_WEB_UI_URL must be an http\(s\) URL/.test(err.message));
    assert.equal(parseConfig({}).temporalWebUiUrl, null);
  });
});
