import assert from 'node:assert/strict';
import { createHttpClient } from '../../src/net/http';
import { createPlatformAdapters } from '../../src/platforms/registry';
import { startApi, type TestApi } from '../helpers/api';
import { standIns } from './registry';

/**
 * `npm run standins` promises that each printed body connects its stand-in's demo account at once (README, Quick
 * start): every one is sent to the real API, pointed at the stand-ins as the printed environment points `npm start`.
 */
describe('npm run standins: the demo accounts', function () {
  this.timeout(60_000);
  const running: Array<[string, Awaited<ReturnType<(typeof standIns)[string]>>]> = [];
  const http = createHttpClient({ allowInsecure: true, timeoutMs: 5_000 });
  let api: TestApi;

  before(async () => {
    for (const [slug, start] of Object.entries(standIns)) running.push([slug, await start()]);
    const origin = (slug: string) => running.find(([s]) => s === slug)![1].origin;
    const adapters = createPlatformAdapters({
      http,
      platformUrls: { x: origin('x'), telegram: origin('telegram'), facebook: origin('facebook'), instagram: origin('instagram'), threads: origin('threads'), linkedin: origin('linkedin') },
      allowInsecureUrls: true,
    });
    api = await startApi({ plan: 'enterprise', deps: { adapters } });
  });
  after(async () => {
    await api?.close();
    await Promise.all(running.map(([, standIn]) => standIn.stop()));
    await http.close();
  });

  it('connects every stand-in with the body it prints', async () => {
    const refused: string[] = [];
    for (const [slug, standIn] of running) {
      const res = await api.request('POST', '/api/v1/accounts', { body: standIn.connect });
      if (res.status !== 201 || res.body.data.platform !== slug) refused.push(`${slug}: ${res.status} ${res.text}`);
    }
    assert.deepEqual(refused, []);
  });
});
