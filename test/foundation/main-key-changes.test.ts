import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLogger } from '../../src/logger';
import { startHerald } from '../../src/main';
import { createUserWithKey, request, testConfig } from '../helpers/api';
import { testDatabase } from '../helpers/db';

/** `npm start` wires the key cache to the process's notifications (src/main.ts): a revocation anywhere is heard. */
describe('npm start: a key revoked by another process', function () {
  this.timeout(120_000);

  it('is refused as soon as the change is heard, well inside the 2 s a row is kept unheard', async () => {
    const database = await testDatabase();
    const herald = await startHerald(testConfig({ DATABASE_URL: database.url, PORT: '0', HOST: '127.0.0.1' }), createLogger('silent'));
    try {
      const { apiKey, keyId } = await createUserWithKey(database.db);
      assert.equal((await request(herald.url, 'GET', '/api/v1/posts', { key: apiKey })).status, 200);
      // A row read before the notifications listened is kept 2 s: past that, the row is read again, heard.
      await sleep(2_100);
      assert.equal((await request(herald.url, 'GET', '/api/v1/posts', { key: apiKey })).status, 200);
      const revokedAt = Date.now();
      await database.db.updateTable('api_keys').set({ revoked_at: new Date() }).where('id', '=', keyId).execute();
      for (;;) {
        const { status } = await request(herald.url, 'GET', '/api/v1/posts', { key: apiKey });
        if (status === 401) break;
        assert.ok(Date.now() - revokedAt < 1_500, 'still served 1.5 s after the revocation');
        await sleep(20);
      }
    } finally {
      await herald.stop();
    }
  });
});
