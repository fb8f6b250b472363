import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { createApiKey } from '../../src/auth/api-keys';
import { createSealedBox } from '../../src/crypto/sealed-box';
import { createEndpoint } from '../../src/webhooks/endpoints';
import { lockAndCountEndpoints } from '../../src/webhooks/repository';
import { createUser } from '../../src/users/users';
import { testEncryptionKey } from '../helpers/api';
import { testDatabase, type TestDatabase } from '../helpers/db';

/**
 * The endpoint limit's user row lock (README "Accounts", 2026-12-07): `FOR NO KEY UPDATE`, so it holds back no insert
 * that references the user (a foreign-key check takes `FOR KEY SHARE`), and still serialises the limit's decisions.
 */
describe('The webhook endpoint limit and the user row', function () {
  this.timeout(60_000);
  let database: TestDatabase;
  const sealedBox = createSealedBox(Buffer.from(testEncryptionKey, 'hex'));

  before(async () => {
    database = await testDatabase();
  });

  const deps = () => ({ db: database.db, sealedBox, allowInsecureUrls: true });
  const count = async (userId: string) =>
    Number((await database.db.selectFrom('webhook_endpoints').select((eb) => eb.fn.countAll<string>().as('n')).where('user_id', '=', userId).executeTakeFirstOrThrow()).n);

  it('holds back no insert referencing the user while an endpoint is being added', async () => {
    const user = await createUser(database.db, { plan: 'pro' });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => (locked = resolve));
    const holder = database.db.transaction().execute(async (trx) => {
      await lockAndCountEndpoints(trx, user.id);
      locked();
      await held;
    });
    try {
      await lockTaken;
      // An API key for the same user (its foreign-key check reads the user row) while the limit's lock is held.
      await database.db.transaction().execute(async (trx) => {
        await sql`set local lock_timeout = '2s'`.execute(trx);
        await createApiKey(trx, { userId: user.id, name: 'beside the limit', scopes: null, expiresAt: null });
      });
    } finally {
      release();
      await holder;
    }
  });

  it('still lets concurrent adds reach the limit and no further', async () => {
    const user = await createUser(database.db, { plan: 'pro' });
    for (let i = 0; i < 8; i++) assert.equal((await createEndpoint(deps(), user.id, { url: `http://127.0.0.1:9/before-${i}` })).ok, true);
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => createEndpoint(deps(), user.id, { url: `http://127.0.0.1:9/race-${i}` })));
    assert.equal(results.filter((r) => r.ok).length, 2, 'two of six fit under the limit of ten');
    assert.equal(await count(user.id), 10);
  });
});
