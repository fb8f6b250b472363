// Posts are findable in the Temporal Web UI: a running Herald (embedded Temporal with its HTTP API on) registers its
// search attributes, every post workflow carries them, and `PostId = '<uuid>'` finds the post's workflow through the
// same HTTP API the UI calls. No browser needed (the UI itself is tested in web-ui.test.ts).
import assert from 'node:assert/strict';
import { ConfigError, parseConfig } from '../../src/config';
import { createLogger } from '../../src/logger';
import { startHerald, type RunningHerald } from '../../src/main';
import { runningWebUiUrl, webUiPostLink } from '../../src/temporal/web-ui';
import { createUserWithKey, request, testConfig } from '../helpers/api';
import { testDatabase, type TestDatabase } from '../helpers/db';
import { silenceSdkLogs } from '../helpers/temporal';
import { insertXAccount } from '../posts/fixtures';
import { startXStandIn, type XStandIn } from '../standins/x';

function payloadValue(payload: { data?: string } | undefined): unknown {
  return payload?.data === undefined ? undefined : JSON.parse(Buffer.from(payload.data, 'base64').toString('utf8'));
}

describe('Web UI: configuration', () => {
  it('is on by default, on loopback port 8233, and validates its variables', () => {
    assert.deepEqual(parseConfig({}).webUi, { enabled: true, port: 8233, host: '127.0.0.1' });
    assert.deepEqual(parseConfig({ HERALD_WEB_UI: 'false', HERALD_WEB_UI_PORT: '0', HERALD_WEB_UI_HOST: '0.0.0.0' }).webUi, {
      enabled: false,
      port: 0,
      host: '0.0.0.0',
    });
    assert.throws(() => parseConfig({ HERALD_WEB_UI_PORT: '70000' }), (err: unknown) => err instanceof ConfigError && /HERALD_WEB_UI_PORT/.test(err.message));
    assert.throws(() => parseConfig({ HERALD_WEB_UI: 'maybe' }), (err: unknown) => err instanceof ConfigError && /HERALD_WEB_UI/.test(err.message));
  });
});

describe('Web UI: posts are findable by their search attributes (running Herald, embedded Temporal)', function () {
  this.timeout(120_000);
  let database: TestDatabase;
  let x: XStandIn;
  let herald: RunningHerald;

  before(async () => {
    silenceSdkLogs();
    database = await testDatabase();
    x = await startXStandIn();
    herald = await startHerald(
      testConfig({ DATABASE_URL: database.url, HERALD_X_API_URL: x.origin, HOST: '127.0.0.1', HERALD_WEB_UI: 'true', HERALD_WEB_UI_PORT: '0' }),
      createLogger('silent'),
    );
  });

  after(async () => {
    await herald?.stop();
    await x?.stop();
  });

  it('registers PostId, ThreadId, GroupId, UserId and Platform at start', async () => {
    const res = await fetch(`${herald.webUiUrl}/api/v1/namespaces/default/search-attributes`);
    const body = (await res.json()) as { customAttributes: Record<string, string> };
    assert.deepEqual(body.customAttributes, {
      PostId: 'INDEXED_VALUE_TYPE_KEYWORD_LIST',
      ThreadId: 'INDEXED_VALUE_TYPE_KEYWORD',
      GroupId: 'INDEXED_VALUE_TYPE_KEYWORD',
      UserId: 'INDEXED_VALUE_TYPE_KEYWORD',
      Platform: 'INDEXED_VALUE_TYPE_KEYWORD_LIST',
    });
  });

  it("finds a scheduled post's workflow with PostId = '<uuid>' and links it for herald posts stuck", async () => {
    const user = await createUserWithKey(database.db, 'agent');
    const account = await insertXAccount(database.db, user.userId, x);
    const ids: string[] = [];
    for (const [i, text] of ['first of two', 'second of two'].entries()) {
      const at = new Date(Date.now() + (i + 1) * 3_600_000); // one account's scheduled posts are 5 minutes apart at least
      const created = await request(herald.url, 'POST', '/api/v1/posts', { key: user.apiKey, body: { account_id: account.id, text, schedule_at: at.toISOString() } });
      assert.equal(created.status, 201, created.text);
      ids.push(created.body.data.id);
    }
    const query = encodeURIComponent(`PostId = '${ids[0]}'`);
    const list = await fetch(`${herald.webUiUrl}/api/v1/namespaces/default/workflows?query=${query}`);
    const body = (await list.json()) as { executions?: Array<{ execution: { workflowId: string }; searchAttributes: { indexedFields: Record<string, { data?: string }> } }> };
    assert.equal(body.executions?.length, 1, 'exactly the post’s own workflow');
    const [execution] = body.executions!;
    assert.equal(execution!.execution.workflowId, `post-${ids[0]}`);
    const fields = execution!.searchAttributes.indexedFields;
    assert.deepEqual(payloadValue(fields.PostId), [ids[0]]);
    assert.equal(payloadValue(fields.UserId), user.userId);
    assert.deepEqual(payloadValue(fields.Platform), ['x']);
    assert.equal(fields.ThreadId, undefined, 'a single post has no thread');

    const port = Number(new URL(herald.webUiUrl!).port);
    const ui = await runningWebUiUrl({ temporal: { address: null }, webUi: { enabled: true, port, host: '127.0.0.1' } });
    assert.equal(ui, herald.webUiUrl);
    assert.equal(
      webUiPostLink(ui!, 'default', { id: ids[0]!, thread_id: null }),
      `${ui}/namespaces/default/workflows?query=${encodeURIComponent(`PostId = '${ids[0]}'`)}`,
    );
    assert.equal(await runningWebUiUrl({ temporal: { address: 'elsewhere:7233' }, webUi: { enabled: true, port, host: '127.0.0.1' } }), null);
  });
});
