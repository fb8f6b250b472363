import assert from 'node:assert/strict';
import { createLogger } from '../../src/logger';
import { holdEmbeddedTemporalLock } from '../../src/db/single-herald';
import { type RunningHerald, startHerald } from '../../src/main';
import { testConfig } from '../helpers/api';
import { createTestDatabase } from '../helpers/db';

/**
 * Two `npm start` on one database, each with its own embedded (empty) Temporal: the second would reconcile against
 * its own server, find every post's workflow missing and start a second one per post. It refuses to start instead.
 */
describe('one Herald with the embedded Temporal per database', function () {
  this.timeout(120_000);
  let first: RunningHerald | undefined;
  after(async () => first?.stop());

  it('refuses a second start on the same database, saying why, and lets one start again once the first stopped', async () => {
    const database = await createTestDatabase();
    const config = testConfig({ DATABASE_URL: database.url, HOST: '127.0.0.1' });
    first = await startHerald(config, createLogger('silent'));
    await assert.rejects(startHerald(config, createLogger('silent')), {
      name: 'AnotherHeraldRuns',
      message: /^Another Herald with the embedded Temporal server already runs on this database: .*TEMPORAL_ADDRESS/,
    });
    await first.stop();
    first = undefined;
    const release = await holdEmbeddedTemporalLock(database.url);
    await release();
  });
});
