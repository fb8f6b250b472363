// The real Temporal Web UI against a running Herald (embedded Temporal, `npm start`'s setup), driven by a headless
// Chromium: a scheduled post's workflow is found by its PostId, its history shows the timer, and a test workflow
// is terminated from the UI. A screenshot of each step is kept in .artifacts/web-ui/ (git-ignored).
// Needs Chromium from Debian (`apt-get install -y chromium`); without it the suite skips with a one-line reason.
// The UI is built once (src/temporal/web-ui.ts) and reused while its sources do not change.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { createLogger } from '../../src/logger';
import { startHerald, type RunningHerald } from '../../src/main';
import { ensureWebUiBuilt, webUiIsBuilt } from '../../src/temporal/web-ui';
import { createUserWithKey, request, testConfig } from '../helpers/api';
import { testDatabase, type TestDatabase } from '../helpers/db';
import { silenceSdkLogs } from '../helpers/temporal';
import { insertXAccount } from '../posts/fixtures';
import { startXStandIn, type XStandIn } from '../standins/x';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const ARTIFACTS = path.resolve('.artifacts', 'web-ui');
const UI_TIMEOUT_MS = 60_000;

describe('Temporal Web UI (headless Chromium against a running Herald)', function () {
  this.timeout(120_000);
  let database: TestDatabase;
  let x: XStandIn;
  let herald: RunningHerald;
  let browser: Browser;
  let page: Page;

  before(async function () {
    if (!existsSync(CHROMIUM)) {
      console.log(`      skipped: no Chromium at ${CHROMIUM} (apt-get install -y chromium)`);
      this.skip();
    }
    // First build on a fresh clone: npm ci in temporal-ui/ and vite build (minutes on a loaded machine).
    this.timeout(15 * 60_000);
    const served = await ensureWebUiBuilt(createLogger('silent'));
    assert.ok(webUiIsBuilt() && existsSync(path.join(served, 'index.html')), 'the build is current and complete');
    silenceSdkLogs();
    database = await testDatabase();
    x = await startXStandIn();
    herald = await startHerald(
      testConfig({ DATABASE_URL: database.url, HERALD_X_API_URL: x.origin, HOST: '127.0.0.1', HERALD_WEB_UI: 'true', HERALD_WEB_UI_PORT: '0' }),
      createLogger('silent'),
    );
    assert.ok(herald.webUiUrl, 'the embedded Temporal server serves the Web UI');
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.setDefaultTimeout(UI_TIMEOUT_MS);
    rmSync(ARTIFACTS, { recursive: true, force: true });
    mkdirSync(ARTIFACTS, { recursive: true });
  });

  after(async () => {
    await browser?.close();
    await herald?.stop();
    await x?.stop();
  });

  afterEach(async function () {
    if (page && this.currentTest) {
      const name = this.currentTest.title.replace(/[^a-z0-9]+/gi, '-').slice(0, 60);
      await page.screenshot({ path: path.join(ARTIFACTS, `${this.currentTest.state ?? 'done'}-${name}.png`), fullPage: true }).catch(() => undefined);
    }
  });

  it('finds a scheduled post by its PostId and shows the timer in its history', async () => {
    const user = await createUserWithKey(database.db, 'agent');
    const account = await insertXAccount(database.db, user.userId, x);
    const at = new Date(Date.now() + 3_600_000);
    const created = await request(herald.url, 'POST', '/api/v1/posts', {
      key: user.apiKey,
      body: { account_id: account.id, text: 'seen in the Web UI', schedule_at: at.toISOString() },
    });
    assert.equal(created.status, 201, created.text);
    const postId: string = created.body.data.id;

    await page.goto(`${herald.webUiUrl}/namespaces/default/workflows?query=${encodeURIComponent(`PostId = '${postId}'`)}`);
    const row = page.getByRole('link', { name: `post-${postId}` });
    await row.waitFor();
    assert.equal(await page.getByText(/^1 Workflow/).count(), 1, 'the filter finds exactly the post’s workflow');
    await row.click();
    await page.waitForURL(/\/history/);
    await page.getByText(/Timer ?Started/i).first().waitFor();
    assert.ok(await page.getByText('publishPost').first().isVisible(), 'the workflow type is shown');
  });

  it('terminates a running workflow from the workflow page', async () => {
    const workflowId = `web-ui-terminate-${Date.now()}`;
    const api = `${herald.webUiUrl}/api/v1/namespaces/default/workflows/${workflowId}`;
    // A workflow no worker polls for: it stays Running until someone acts on it.
    const started = await fetch(api, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'caller-type': 'operator' },
      body: JSON.stringify({ workflowType: { name: 'webUiProbe' }, taskQueue: { name: 'web-ui-probe' }, requestId: workflowId }),
    });
    assert.equal(started.status, 200, await started.text());

    await page.goto(`${herald.webUiUrl}/namespaces/default/workflows/${workflowId}`);
    await page.waitForURL(/\/history/);
    await page.getByRole('button', { name: /workflow actions/i }).click();
    // The actions menu is rendered for both layouts (wide and narrow); click the one on screen.
    await page.locator('[data-testid="terminate-button"]:visible').first().click();
    const modal = '[data-testid="terminate-confirmation-modal"]';
    await page.locator(`${modal} #workflow-termination-reason:visible`).first().fill('terminated from the Web UI test');
    await page.locator(`${modal} [data-testid="confirm-modal-button"]:visible`).first().click();

    const deadline = Date.now() + UI_TIMEOUT_MS;
    let status = '';
    while (Date.now() < deadline) {
      const described = (await (await fetch(api)).json()) as { workflowExecutionInfo: { status: string } };
      status = described.workflowExecutionInfo.status;
      if (status === 'WORKFLOW_EXECUTION_STATUS_TERMINATED') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal(status, 'WORKFLOW_EXECUTION_STATUS_TERMINATED');
    await page.getByText(/Terminated/).first().waitFor();
  });
});
